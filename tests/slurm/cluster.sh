# Sourced by the Slurm tests: a private one-node Slurm 22.05 cluster in a directory of its own
# (Debian's slurmctld, slurmd and munge; never the machine's daemons or /etc/slurm): munged on its
# own socket and key, slurmctld and slurmd on their own ports, no accounting, process tracking by
# process tree (proctrack/linuxproc), no task plugin, select/cons_tres. Clients find it through
# $SLURM_CONF. About 2 s to come up.
#
#   cluster_up DIR NODE_GRES GRES_CONF_LINES   # exports SLURM_CONF; NODE_GRES e.g. "hugepages:2M:96"
#   cluster_down                               # stops every daemon it started (by pid)

cluster_up() {
  local dir=$1 node_gres=$2 gres_conf=$3
  CLUSTER_DIR=$dir
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/spool" "$dir/log"
  chmod 700 "$dir/munge"
  # munged refuses group- or world-readable keys and key dirs.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munge.seed" ||
    { echo "cluster_up: munged did not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null)" >&2; return 1; }
  # Ports of our own: two free ones above 20000 picked by the kernel.
  local ports
  ports=$(python3 -c 'import socket
ss=[socket.socket() for _ in range(2)]
[s.bind(("127.0.0.1",0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))')
  local ctld_port=${ports% *} slurmd_port=${ports#* }
  local node cpus mem
  node=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ {print int($2/1024/2)}' /proc/meminfo)
  export SLURM_CONF=$dir/slurm.conf
  cat >"$SLURM_CONF" <<CONF
ClusterName=qlaunchtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
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
ReturnToService=2
KillWait=30
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
GresTypes=hugepages
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=$node_gres State=UNKNOWN
PartitionName=vms Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  printf '%s\n' "$gres_conf" >"$dir/gres.conf"
  slurmctld -f "$SLURM_CONF" -i ||
    { echo "cluster_up: slurmctld did not start: $(tail -n 5 "$dir/log/slurmctld.log")" >&2; return 1; }
  slurmd -f "$SLURM_CONF" ||
    { echo "cluster_up: slurmd did not start: $(tail -n 5 "$dir/log/slurmd.log")" >&2; return 1; }
  local i
  for i in $(seq 100); do
    sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle && return 0
    sleep 0.1
  done
  echo "cluster_up: the node never became idle: $(sinfo -N 2>&1); $(tail -n 5 "$dir/log/slurmctld.log")" >&2
  return 1
}

# Stops the daemons by the pids in their pid files (slurmd first), waits for them to exit.
cluster_down() {
  local dir=${CLUSTER_DIR:-}
  [ -n "$dir" ] || return 0
  local f pid
  for f in slurmd.pid slurmctld.pid munge/munged.pid; do
    pid=$(cat "$dir/$f" 2>/dev/null) || continue
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}
