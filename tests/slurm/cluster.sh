# Sourced by the Slurm tests: a private Slurm 22.05 cluster in a directory of its own (Debian's
# slurmctld, slurmd and munge; never the machine's daemons or /etc/slurm): munged on its own
# socket and key, slurmctld and slurmd on their own ports, no accounting, process tracking by
# process tree (proctrack/linuxproc), no task plugin, select/cons_tres. Clients find it through
# $SLURM_CONF. About 2 s to come up.
#
#   cluster_up DIR NODE_GRES GRES_CONF_LINES   # one node, this host; NODE_GRES e.g. "hugepages:2M:96"
#   cluster_up_two_nodes DIR GRES_A GRES_B     # nodes qlt-a and qlt-b, each slurmd in a network
#                                              # namespace of its own (veth to this host)
#   cluster_down                               # kills the jobs, stops every daemon it started (by pid)

# munged with its own key and socket in DIR/munge.
_cluster_munge() {
  local dir=$1
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/log"
  chmod 700 "$dir/munge"
  # munged refuses group- or world-readable keys and key dirs.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munge.seed" ||
    { echo "cluster: munged did not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null)" >&2; return 1; }
}

# DIR/slurm.conf with the controller on CTLD_ADDR and NODE_LINES (NodeName=... lines).
_cluster_conf() {
  local dir=$1 ctld_addr=$2 node_lines=$3 ports
  # Ports of our own: two free ones picked by the kernel.
  ports=$(python3 -c 'import socket
ss=[socket.socket() for _ in range(2)]
[s.bind(("0.0.0.0",0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))')
  export SLURM_CONF=$dir/slurm.conf
  cat >"$SLURM_CONF" <<CONF
ClusterName=qlaunchtest
SlurmctldHost=$(hostname -s)($ctld_addr)
SlurmctldPort=${ports% *}
SlurmdPort=${ports#* }
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=30
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
GresTypes=hugepages
$node_lines
PartitionName=vms Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
}

# Waits until every node is idle.
_cluster_wait_idle() {
  for _ in $(seq 150); do
    [ "$(sinfo -h -N -o '%T' 2>/dev/null | sort -u)" = idle ] && return 0
    sleep 0.1
  done
  echo "cluster: the nodes never became idle: $(sinfo -N 2>&1); $(tail -n 5 "$CLUSTER_DIR/log/slurmctld.log")" >&2
  return 1
}

_cluster_ctld() {
  slurmctld -f "$SLURM_CONF" -i ||
    { echo "cluster: slurmctld did not start: $(tail -n 5 "$CLUSTER_DIR/log/slurmctld.log")" >&2; return 1; }
}

cluster_up() {
  local dir=$1 node_gres=$2 gres_conf=$3 node
  CLUSTER_DIR=$dir
  node=$(hostname -s)
  _cluster_munge "$dir" || return 1
  _cluster_conf "$dir" 127.0.0.1 "NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$(
    awk '/MemTotal/ {print int($2/1024/2)}' /proc/meminfo) Gres=$node_gres State=UNKNOWN"
  printf '%s\n' "$gres_conf" >"$dir/gres.conf"
  mkdir -p "$dir/spool-$node"
  _cluster_ctld || return 1
  slurmd -f "$SLURM_CONF" ||
    { echo "cluster: slurmd did not start: $(tail -n 5 "$dir/log/slurmd-$node.log")" >&2; return 1; }
  _cluster_wait_idle
}

# Two nodes on this one machine. Debian's slurmd is built without --enable-multiple-slurmd (one
# slurmd per address), so each runs in a network namespace of its own (qlt-a: 10.77.1.2,
# qlt-b: 10.77.2.2, a veth pair to this host each) with `slurmd -N`. Everything else (the
# filesystem, the hugepage pool, /run/qlaunch) is this host's; the GRES counts split the pool.
cluster_up_two_nodes() {
  local dir=$1 gres_a=$2 gres_b=$3 n i
  CLUSTER_DIR=$dir
  CLUSTER_NETNS="qlt-a qlt-b"
  for n in a b; do
    i=$([ $n = a ] && echo 1 || echo 2)
    ip netns add "qlt-$n" || return 1
    ip link add "qlt-h$n" type veth peer name eth0 netns "qlt-$n" || return 1
    ip addr add "10.77.$i.1/24" dev "qlt-h$n"
    ip link set "qlt-h$n" up
    ip -n "qlt-$n" addr add "10.77.$i.2/24" dev eth0
    ip -n "qlt-$n" link set eth0 up
    ip -n "qlt-$n" link set lo up
    ip -n "qlt-$n" route add default via "10.77.$i.1"
  done
  _cluster_munge "$dir" || return 1
  _cluster_conf "$dir" 10.77.1.1 "NodeName=qlt-a NodeAddr=10.77.1.2 CPUs=1 RealMemory=1024 Gres=$gres_a State=UNKNOWN
NodeName=qlt-b NodeAddr=10.77.2.2 CPUs=1 RealMemory=1024 Gres=$gres_b State=UNKNOWN"
  printf 'NodeName=qlt-a Name=hugepages Type=%s Count=%s\nNodeName=qlt-b Name=hugepages Type=%s Count=%s\n' \
    "$(cut -d: -f2 <<<"$gres_a")" "$(cut -d: -f3 <<<"$gres_a")" \
    "$(cut -d: -f2 <<<"$gres_b")" "$(cut -d: -f3 <<<"$gres_b")" >"$dir/gres.conf"
  _cluster_ctld || return 1
  for n in a b; do
    mkdir -p "$dir/spool-qlt-$n"
    # nsenter, not `ip netns exec`: that also remounts /sys, hiding /sys/fs/cgroup from qlaunch.
    nsenter --net="/run/netns/qlt-$n" slurmd -N "qlt-$n" -f "$SLURM_CONF" ||
      { echo "cluster: slurmd qlt-$n did not start: $(tail -n 5 "$dir/log/slurmd-qlt-$n.log")" >&2; return 1; }
  done
  _cluster_wait_idle
}

# The process exists and is not a zombie.
_cluster_alive() { [ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# Kills the cluster's jobs (so no slurmstepd stays behind), then stops the daemons by the pids
# in their pid files (slurmds first) and waits for them to exit; removes its namespaces.
cluster_down() {
  local dir=${CLUSTER_DIR:-}
  [ -n "$dir" ] || return 0
  local f pid jobs
  jobs=$(squeue -h -o %i 2>/dev/null || true)
  if [ -n "$jobs" ]; then
    scancel --signal=KILL $jobs 2>/dev/null || true
    scancel $jobs 2>/dev/null || true
    for _ in $(seq 100); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  for f in "$dir"/slurmd-*.pid "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    pid=$(cat "$f" 2>/dev/null) || continue
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do _cluster_alive "$pid" || break; sleep 0.05; done
    if _cluster_alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  for n in ${CLUSTER_NETNS:-}; do
    ip netns del "$n" 2>/dev/null || true
    ip link del "qlt-h${n#qlt-}" 2>/dev/null || true
  done
  CLUSTER_DIR=
}
