# Sourced by the Slurm tests (after defining fail): waiting for jobs and VMs, reading their
# fate. Needs $qlaunch, and QLAUNCH_STATE_DIR in the environment.

hp_free() { awk '/HugePages_Free/ {print $2}' /proc/meminfo; }

# write_vm_xml FILE NAME MIB: a TCG guest (SeaBIOS alone: it ignores the ACPI power button) on
# 2 MiB hugepages.
write_vm_xml() {
  cat >"$1" <<XML
<domain type='qemu'>
  <name>$2</name>
  <memory unit='MiB'>$3</memory>
  <memoryBacking><hugepages><page size='2' unit='MiB'/></hugepages><source type='memfd'/>
    <access mode='shared'/><allocation mode='immediate'/></memoryBacking>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <features><acpi/></features>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator><memballoon model='none'/></devices>
</domain>
XML
}

job_state() { squeue -h -j "$1" -o %t 2>/dev/null || true; }
wait_job_state() {  # JOB STATE: until squeue shows it (or "" once it is gone)
  for _ in $(seq 600); do [ "$(job_state "$1")" = "$2" ] && return 0; sleep 0.1; done
  fail "job $1 never reached state '$2' (now '$(job_state "$1")')"
}
vm_state() { "$qlaunch" list --json | python3 -c "import json,sys; print(''.join(d['state'] for d in json.load(sys.stdin) if d['name']=='$1'))"; }
wait_vm_running() {
  for _ in $(seq 600); do [ "$(vm_state "$1")" = running ] && return 0; sleep 0.1; done
  fail "$1 never ran (qlaunch list: '$(vm_state "$1")')"
}
exit_code() { scontrol show job "$1" | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p'; }
qemu_gone_within() {  # PID SECONDS
  local t0 now
  t0=$(date +%s.%N)
  while [ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; do
    now=$(date +%s.%N)
    awk -v a="$t0" -v b="$now" -v s="$2" 'BEGIN { exit !(b - a > s) }' && return 1
    sleep 0.01
  done
  echo "$t0 $(date +%s.%N)" | awk '{printf "%.2f", $2 - $1}'
}

