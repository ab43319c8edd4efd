# jflat.awk: flattens one JSON document into "path=value" lines, for shell assertions without
# jq (the lab guest has only busybox). Paths join object keys and array indexes with dots:
#   {"host":{"nodes":[{"id":0,"cpus":[0,1]}]}}  ->  host.nodes.0.id=0
#                                                   host.nodes.0.cpus.0=0
#                                                   host.nodes.0.cpus.1=1
# Strings are printed without quotes (\" \\ \/ unescaped, other escapes kept as written), an
# empty array as "path=[]", an empty object as "path={}". Malformed input: a line
# "jflat-error=<offset>" and exit status 1.
# Usage: awk -f jflat.awk FILE.json
{ doc = doc $0 "\n" }

function path(depth,    p, i) {
  p = ""
  for (i = 1; i <= depth; i++) p = (i == 1) ? key[i] : p "." key[i]
  return p
}

# A value starts at the current depth: count it (arrays: its index is key[d]).
function value_starts() { if (d > 0) count[d]++ }

function fail(at) { print "jflat-error=" at; bad = 1; exit 1 }

END {
  if (bad) exit 1
  n = length(doc); i = 1; d = 0
  while (i <= n) {
    c = substr(doc, i, 1)
    if (c == " " || c == "\n" || c == "\t" || c == "\r" || c == ":") { i++; continue }
    if (c == "{" || c == "[") {
      value_starts()
      d++; type[d] = c; count[d] = 0; expect_key[d] = (c == "{")
      key[d] = (c == "[") ? 0 : ""
      i++; continue
    }
    if (c == "}" || c == "]") {
      if (d == 0) fail(i)
      if (count[d] == 0) print path(d - 1) "=" (c == "}" ? "{}" : "[]")
      d--; i++; continue
    }
    if (c == ",") {
      if (d == 0) fail(i)
      if (type[d] == "[") key[d]++
      else expect_key[d] = 1
      i++; continue
    }
    if (c == "\"") {
      s = ""; i++
      while (i <= n) {
        c = substr(doc, i, 1)
        if (c == "\\") {
          e = substr(doc, i + 1, 1)
          s = s ((e == "\"" || e == "\\" || e == "/") ? e : "\\" e)
          i += 2; continue
        }
        if (c == "\"") break
        s = s c; i++
      }
      if (i > n) fail(i)
      i++
      if (d > 0 && type[d] == "{" && expect_key[d]) { key[d] = s; expect_key[d] = 0; continue }
      value_starts(); print path(d) "=" s; continue
    }
    # number, true, false, null
    s = ""
    while (i <= n) {
      c = substr(doc, i, 1)
      if (c == "," || c == "}" || c == "]" || c == " " || c == "\n" || c == "\t" || c == "\r") break
      s = s c; i++
    }
    if (s == "") fail(i)
    value_starts(); print path(d) "=" s
  }
  if (d != 0) fail(n)
}
