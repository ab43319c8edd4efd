# The NUMA lab's attach-device check, sourced by init (its helpers: free_all, nth, var, jflat,
# jget, jlist, in_set, cpus_of_nodes, pass, fail, info).
#
# attach_dimm_check NAME NODE DIMM_XML: start attach.xml (its cell on node 0), attach DIMM_XML (a
# DIMM on 2 MiB pages of host node NODE), then
#   - NODE's free 2 MiB pages drop by exactly the DIMM's size in pages and no other node's do,
#     and dominfo finds the DIMM's backend wholly on NODE, bound there in QEMU's numa_maps;
#   - qlaunch filled it (attach-device --json: "prealloc":"launcher") with workers pinned to the
#     CPUs of NODE's nearest CPU nodes (LAB_NEAREST_CPU_NODES_<NODE>), and seen only there;
#   - detach-device gives NODE's pages back, when the guest releases the DIMM. The nested guest
#     runs no OS (no kernel), so nothing answers QEMU's ACPI eject request: detach-device says
#     so (exit 3) and the DIMM stays attached, its pages taken. Then destroy must give back every
#     page of every node, which the check requires in any case.
ql() { QLAUNCH_STATE_DIR=/run/qlaunch QLAUNCH_QMP_TIMEOUT_MS=120000 $QL "$@"; }

attach_dimm_check() {
  name=$1 node=$2 dimm=$3
  why=""
  dimm_pages=32  # dimm-node2.xml: 64 MiB
  before=$(free_all)
  ql start --json $LAB/attach.xml >/tmp/$name.start 2>/tmp/$name.start.err
  rc=$?
  if [ $rc != 0 ]; then
    fail "$name" "start exit $rc: $(head -c 400 /tmp/$name.start.err | tr '\n' ' ')"
    ql destroy lab-attach >/dev/null 2>&1
    return
  fi
  started=$(free_all)
  jflat /tmp/$name.start >/tmp/$name.start.flat 2>/dev/null || : >/tmp/$name.start.flat
  qpid=$(jget /tmp/$name.start.flat pid)

  # Attach: NODE's pages, filled by qlaunch's workers near NODE.
  out=/tmp/$name.attach
  ql attach-device --json lab-attach "$dimm" >$out 2>$out.err
  rc=$?
  attached=$(free_all)
  [ $rc = 0 ] || why="$why; attach-device exit $rc: $(head -c 400 $out.err | tr '\n' ' ')"
  j=1
  for n in $LAB_NODES; do
    s=$(nth $j "$started"); a=$(nth $j "$attached")
    if [ "$n" = "$node" ]; then
      [ "$a" = "$((s - dimm_pages))" ] || why="$why; node $n free $s -> $a on attach, want $((s - dimm_pages))"
    else
      [ "$a" = "$s" ] || why="$why; node $n (not the DIMM's) free $s -> $a on attach"
    fi
    j=$((j + 1))
  done
  F=/tmp/$name.attach.flat
  jflat $out >$F 2>/dev/null || : >$F
  alias=$(jget $F alias)
  want_cpus=$(cpus_of_nodes "$(var LAB_NEAREST_CPU_NODES_$node)")
  planned=$(jlist $F fill_cpus)
  observed=$(jlist $F fill_observed_cpus)
  threads=$(jget $F fill_threads)
  [ "$alias" = dimm0 ] || why="$why; alias '$alias', want dimm0"
  [ "$(jget $F prealloc)" = launcher ] || why="$why; prealloc '$(jget $F prealloc)', want launcher (qlaunch fills a shared hugetlb memfd)"
  [ "$planned" = "$want_cpus" ] || why="$why; workers pinned to CPUs [$planned], want [$want_cpus] (nodes $(var LAB_NEAREST_CPU_NODES_$node))"
  [ "${threads:-0}" -gt 0 ] || why="$why; fill_threads '$threads'"
  [ -n "$observed" ] || why="$why; no observed worker CPUs"
  for c in $observed; do
    in_set "$c" "$want_cpus" || why="$why; a worker ran on CPU $c, outside [$want_cpus]"
  done

  # dominfo: the DIMM's backend (memdimm0), every page of its memfd, on NODE; QEMU's mapping of
  # it bound to NODE.
  I=/tmp/$name.info.flat
  ql dominfo --json lab-attach >/tmp/$name.info 2>/tmp/$name.info.err || why="$why; dominfo: $(head -c 200 /tmp/$name.info.err)"
  jflat /tmp/$name.info >$I 2>/dev/null || : >$I
  b=$(grep -E '^backends\.[0-9]+\.id=memdimm0$' $I | sed -E 's/^backends\.([0-9]+)\..*/\1/')
  dimm_bytes=$((dimm_pages * 2097152))
  resident=""
  if [ -z "$b" ]; then
    why="$why; dominfo has no backend memdimm0"
  else
    resident=$(grep -E "^backends\.$b\.memory_by_node\." $I | sed -E "s/^backends\.$b\.memory_by_node\.//" | tr '\n' ' ' | sed 's/ $//')
    [ "$resident" = "$node=$dimm_bytes" ] || why="$why; dominfo memdimm0 memory_by_node [$resident], want [$node=$dimm_bytes]"
    [ "$(jget $I backends.$b.memory_source)" = backing ] || why="$why; memdimm0 memory_source '$(jget $I backends.$b.memory_source)', want backing"
  fi
  policies=""
  [ -n "$qpid" ] && [ -r /proc/$qpid/numa_maps ] && policies=$(awk '/huge/ { print $2 }' /proc/$qpid/numa_maps | sort | tr '\n' ' ' | sed 's/ $//')
  [ "$policies" = "bind:0 bind:$node" ] || why="$why; QEMU's hugetlb mappings have policies [$policies], want [bind:0 bind:$node]"

  # Detach: the guest must release the DIMM (it cannot here: no OS), then NODE's pages are back.
  ql detach-device --json --timeout 2 lab-attach "$dimm" >/tmp/$name.detach 2>/tmp/$name.detach.err
  drc=$?
  detached=$(free_all)
  case $drc in
    0)
      detach="released, node $node free $(nth $((node + 1)) "$attached") -> $(nth $((node + 1)) "$detached")"
      [ "$detached" = "$started" ] || why="$why; free pages [$started] -> [$detached] after detach, want all of the DIMM's back" ;;
    3)
      detach="not released in 2 s (exit 3: no guest OS answers the ACPI eject), node $node still $(nth $((node + 1)) "$detached") free"
      grep -q '"released":false' /tmp/$name.detach || why="$why; detach-device exit 3 without \"released\":false: $(head -c 200 /tmp/$name.detach)"
      [ "$detached" = "$attached" ] || why="$why; free pages [$attached] -> [$detached] while the DIMM stays attached" ;;
    *)
      detach="exit $drc"
      why="$why; detach-device exit $drc: $(head -c 300 /tmp/$name.detach.err | tr '\n' ' ')" ;;
  esac

  ql destroy lab-attach >/tmp/$name.destroy 2>&1 || why="$why; destroy: $(head -c 200 /tmp/$name.destroy)"
  after=$(free_all)
  [ "$after" = "$before" ] || why="$why; free pages [$before] -> [$after] after destroy"
  info "$name: free 2M pages per node before [$before] started [$started] attached [$attached] detach [$detached] destroyed [$after]"
  if [ -z "$why" ]; then
    pass "$name" "$alias (64 MiB, nodemask $node): free [$started] -> [$attached] on attach, node $node -$dimm_pages, others unchanged; filled by qlaunch in $(jget $F fill_ms) ms, $threads threads pinned to CPUs [$planned] (node $(var LAB_NEAREST_CPU_NODES_$node)), observed [$observed]; dominfo memdimm0 [$resident] ($(jget $I backends.$b.memory_source)), numa_maps [$policies]; detach: $detach; destroy: free [$before] -> [$after], every page back"
  else
    fail "$name" "${why#; }"
  fi
}
