# The NUMA lab's warm pool check (issue 38), sourced by init after attach_dimm.sh (its ql, and
# init's helpers: free_all, nth, var, jflat, jget, jlist, in_set, cpus_of_nodes, pass, fail, info).
#
# warm_pool_check NAME: `pool fill` of start.xml (cells on node 0, CPU-less node 2 and node 3, 8 MiB
# each) makes a warm set there, then
#   - nodes 0, 2 and 3 each lose exactly 4 free 2 MiB pages, node 1 none;
#   - `start` takes the set (memory_sources all "warm"), allocating no page more, and dominfo finds
#     each cell's memory wholly on the node its XML asks for;
#   - after destroy the detached scrub makes the set warm again (pool status), and a scrub of it
#     in the foreground (the files renamed dirty by hand, as scripts/bench-warm does) runs each
#     file's workers on the CPUs nearest its node (LAB_NEAREST_CPU_NODES_<NODE>), seen only there;
#   - `pool drain` gives every page of every node back.
warm_pool_check() {
  name=$1
  why=""
  before=$(free_all)
  ql pool fill --json $LAB/start.xml >/tmp/$name.fill 2>/tmp/$name.fill.err || why="$why; pool fill: $(head -c 300 /tmp/$name.fill.err | tr '\n' ' ')"
  filled=$(free_all)
  j=1
  for n in $LAB_NODES; do
    b=$(nth $j "$before"); f=$(nth $j "$filled")
    case $n in
      1) [ "$f" = "$b" ] || why="$why; node 1 (no cell) free $b -> $f on fill" ;;
      *) [ "$f" = "$((b - 4))" ] || why="$why; node $n free $b -> $f on fill, want $((b - 4))" ;;
    esac
    j=$((j + 1))
  done

  ql start --json $LAB/start.xml >/tmp/$name.start 2>/tmp/$name.start.err || why="$why; start: $(head -c 300 /tmp/$name.start.err | tr '\n' ' ')"
  started=$(free_all)
  [ "$started" = "$filled" ] || why="$why; free pages [$filled] -> [$started] on a start from the warm set"
  S=/tmp/$name.start.flat
  jflat /tmp/$name.start >$S 2>/dev/null || : >$S
  sources=""
  for c in 0 1 2; do
    src=$(jget $S memory_sources.ram-node$c)
    sources="$sources ram-node$c=$src"
    [ "$src" = warm ] || why="$why; ram-node$c came from '$src', want warm"
  done
  I=/tmp/$name.info.flat
  ql dominfo --json lab-start >/tmp/$name.info 2>/tmp/$name.info.err || why="$why; dominfo: $(head -c 200 /tmp/$name.info.err)"
  jflat /tmp/$name.info >$I 2>/dev/null || : >$I
  resident=""
  for pair in 0:0 1:2 2:3; do
    c=${pair%:*} node=${pair#*:}
    b=$(grep -E "^backends\.[0-9]+\.id=ram-node$c\$" $I | sed -E 's/^backends\.([0-9]+)\..*/\1/')
    r=$(grep -E "^backends\.$b\.memory_by_node\." $I | sed -E "s/^backends\.$b\.memory_by_node\.//" | tr '\n' ' ' | sed 's/ $//')
    resident="$resident cell$c:[$r]"
    [ -n "$b" ] && [ "$r" = "$node=8388608" ] || why="$why; dominfo ram-node$c memory_by_node [$r], want [$node=8388608] (its XML's node): $(grep -E "^backends\.${b:-x}\." $I | tr '\n' ' ' | head -c 400)"
  done
  qpid=$(jget $S pid)
  [ -n "$why" ] && [ -n "$qpid" ] && info "$name: QEMU's hugetlb mappings: $(grep -E 'huge' /proc/$qpid/numa_maps | tr '\n' '|')"
  ql destroy lab-start >/tmp/$name.destroy 2>&1 || why="$why; destroy: $(head -c 200 /tmp/$name.destroy)"

  # The detached scrub (started by destroy) makes the set warm again.
  warm=""
  for i in $(seq 1 600); do
    ql pool status --json >/tmp/$name.status 2>/dev/null
    jflat /tmp/$name.status >/tmp/$name.status.flat 2>/dev/null
    warm=$(grep -E '^pools\.[0-9]+\.warm\.files=' /tmp/$name.status.flat | sed 's/^[^=]*=//' | awk '{ s += $1 } END { print s + 0 }')
    busy=$(grep -E '^pools\.[0-9]+\.(dirty|scrub)\.files=' /tmp/$name.status.flat | sed 's/^[^=]*=//' | awk '{ s += $1 } END { print s + 0 }')
    [ "$warm" = 3 ] && [ "$busy" = 0 ] && break
    sleep 0.2
  done
  [ "$warm" = 3 ] || why="$why; $warm warm files after the detached scrub, want 3"

  # The same scrub in the foreground, to see where its workers ran.
  for f in /dev/hugepages/qlaunch-pool/warm.*; do mv "$f" "/dev/hugepages/qlaunch-pool/dirty.${f#*/warm.}"; done
  ql pool scrub --json >/tmp/$name.scrub 2>/tmp/$name.scrub.err || why="$why; pool scrub: $(head -c 200 /tmp/$name.scrub.err)"
  C=/tmp/$name.scrub.flat
  jflat /tmp/$name.scrub >$C 2>/dev/null || : >$C
  [ "$(jget $C files)" = 3 ] || why="$why; pool scrub zeroed '$(jget $C files)' files, want 3"
  where=""
  for i in 0 1 2; do
    node=$(jget $C scrubbed.$i.node)
    want=$(cpus_of_nodes "$(var LAB_NEAREST_CPU_NODES_$node)")
    cpus=$(jlist $C scrubbed.$i.cpus)
    seen=$(jlist $C scrubbed.$i.observed_cpus)
    where="$where node$node:[$cpus] seen [$seen]"
    [ -n "$node" ] && [ "$cpus" = "$want" ] || why="$why; node $node's file scrubbed by workers pinned to [$cpus], want [$want] (nodes $(var LAB_NEAREST_CPU_NODES_$node))"
    [ -n "$seen" ] || why="$why; no observed scrub CPUs for node $node"
    for c in $seen; do in_set "$c" "$want" || why="$why; a scrub worker for node $node ran on CPU $c, outside [$want]"; done
  done

  ql pool drain >/tmp/$name.drain 2>&1 || why="$why; pool drain: $(head -c 200 /tmp/$name.drain)"
  after=$(free_all)
  [ "$after" = "$before" ] || why="$why; free pages [$before] -> [$after] after pool drain"
  info "$name: free 2M pages per node before [$before] filled [$filled] started [$started] drained [$after]"
  if [ -z "$why" ]; then
    pass "$name" "warm set on nodes 0, 2, 3: free [$before] -> [$filled]; start took it ($sources), free unchanged; dominfo$resident; scrub workers$where; drain: free [$after], every page back"
  else
    fail "$name" "${why#; }"
  fi
}
