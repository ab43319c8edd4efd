# The NUMA lab's live migration check, sourced by init (its helpers: free_all, nth, jflat, jget,
# pass, fail, info). Two state roots stand for two hosts on the lab's four nodes.
#
# migrate_check NAME: start.xml (cells on node 0, CPU-less node 2 and tied node 3, 4 pages each)
# under /run/qlaunch-src; the destination `start --incoming` from the source's live XML under
# /run/qlaunch-dst, its memory filled before it listens (nodes 0, 2, 3 lose 4 more pages each,
# node 1 none); `migrate` over a unix socket; then
#   - the source is gone (its state and QEMU), its pages back: nodes 0, 2, 3 hold one domain's 4;
#   - the destination runs, its hugetlb mappings bound to nodes 0, 2 and 3 in QEMU's numa_maps,
#     dominfo finds every page of each backend on its planned node;
#   - after destroy, every page of every node is back.
qsrc() { QLAUNCH_STATE_DIR=/run/qlaunch-src QLAUNCH_QMP_TIMEOUT_MS=120000 $QL "$@"; }
qdst() { QLAUNCH_STATE_DIR=/run/qlaunch-dst QLAUNCH_QMP_TIMEOUT_MS=120000 $QL "$@"; }

migrate_check() {
  name=$1
  why=""
  before=$(free_all)
  # QEMU, as the domain's leased uid, makes the destination's socket: a directory it may write.
  mkdir -p /tmp/mig && chmod 1777 /tmp/mig
  uri=unix:/tmp/mig/m.sock
  qsrc start --json $LAB/start.xml >/tmp/$name.src 2>/tmp/$name.src.err || why="$why; source start: $(head -c 300 /tmp/$name.src.err | tr '\n' ' ')"
  qsrc dumpxml lab-start >/tmp/$name.live.xml 2>/tmp/$name.dump.err || why="$why; dumpxml: $(head -c 200 /tmp/$name.dump.err)"
  qdst start --incoming $uri --json /tmp/$name.live.xml >/tmp/$name.dst 2>/tmp/$name.dst.err ||
    why="$why; destination start --incoming: $(head -c 300 /tmp/$name.dst.err | tr '\n' ' ')"
  both=$(free_all)
  jflat /tmp/$name.dst >/tmp/$name.dst.flat 2>/dev/null || : >/tmp/$name.dst.flat
  dpid=$(jget /tmp/$name.dst.flat pid)
  [ "$(jget /tmp/$name.dst.flat incoming)" = "$uri" ] || why="$why; destination listens on '$(jget /tmp/$name.dst.flat incoming)', want $uri"
  [ "$(qdst list --json 2>/dev/null | grep -o '"state":"[a-z]*"')" = '"state":"incoming"' ] || why="$why; destination not listed as incoming"
  qsrc migrate lab-start $uri --json >/tmp/$name.mig 2>/tmp/$name.mig.err || why="$why; migrate: $(head -c 300 /tmp/$name.mig.err | tr '\n' ' ')"
  jflat /tmp/$name.mig >/tmp/$name.mig.flat 2>/dev/null || : >/tmp/$name.mig.flat
  after_mig=$(free_all)
  [ -z "$(ls /run/qlaunch-src 2>/dev/null)" ] || why="$why; the source's state is still there: $(ls /run/qlaunch-src)"
  [ "$(qdst list --json 2>/dev/null | grep -o '"state":"[a-z]*"')" = '"state":"running"' ] || why="$why; destination not running after the migration"
  j=1
  for n in $LAB_NODES; do
    b=$(nth $j "$before"); w=$(nth $j "$both"); a=$(nth $j "$after_mig")
    per=4; [ "$n" = 1 ] && per=0
    [ "$w" = "$((b - 2 * per))" ] || why="$why; node $n free $b -> $w with both domains, want $((b - 2 * per))"
    [ "$a" = "$((b - per))" ] || why="$why; node $n free $b -> $a after the migration, want $((b - per))"
    j=$((j + 1))
  done
  policies="" dresident=""
  if [ -n "$dpid" ] && [ -r /proc/$dpid/numa_maps ]; then
    policies=$(awk '/huge/ { print $2 }' /proc/$dpid/numa_maps | sort | tr '\n' ' ' | sed 's/ $//')
    [ "$policies" = "bind:0 bind:2 bind:3" ] || why="$why; destination's hugetlb mappings [$policies], want [bind:0 bind:2 bind:3]"
    qdst dominfo --json lab-start >/tmp/$name.info 2>/dev/null
    jflat /tmp/$name.info >/tmp/$name.info.flat 2>/dev/null || : >/tmp/$name.info.flat
    I=/tmp/$name.info.flat
    dresident="$(jget $I memory_by_node.0) $(jget $I memory_by_node.1) $(jget $I memory_by_node.2) $(jget $I memory_by_node.3)"
    [ "$dresident" = "8388608  8388608 8388608" ] || why="$why; destination's dominfo memory_by_node [$dresident], want 8 MiB on nodes 0, 2, 3"
  else
    why="$why; no destination QEMU (pid '$dpid')"
  fi
  qdst destroy lab-start >/tmp/$name.destroy 2>&1 || why="$why; destroy: $(head -c 200 /tmp/$name.destroy)"
  qsrc destroy lab-start >/dev/null 2>&1
  after=$(free_all)
  [ "$after" = "$before" ] || why="$why; free pages [$before] -> [$after] after destroy"
  info "$name: free 2M pages per node before [$before] both [$both] migrated [$after_mig] after [$after]"
  if [ -z "$why" ]; then
    pass "$name" "free [$before] -> both [$both] -> migrated [$after_mig] -> [$after]; destination numa_maps [$policies], dominfo resident [$dresident]; migration $(jget /tmp/$name.mig.flat total_time_ms) ms, downtime $(jget /tmp/$name.mig.flat downtime_ms) ms; destination ready in $(jget /tmp/$name.dst.flat timings_ms.total) ms"
  else
    fail "$name" "${why#; }"
  fi
}
