// The child of QemuProcess::Spawn from its clone to its exec (qemu_spawn.h says what it gets).
//
// Cloned with clone3(2): with a cgroup it is born in it (CLONE_INTO_CGROUP), where the kernel
// takes the cgroup's fork lock for reading. Writing "0" to cgroup.procs, as the child did before,
// takes it for writing, and the first such write after a quiet spell waits out an RCU grace
// period: 10-15 ms of every start on a 2-CPU host, the largest single cost between qlaunch's
// exec and QEMU's. Kernels without clone3 or CLONE_INTO_CGROUP (before 5.7) get a plain fork,
// and the child joins by writing cgroup.procs.
//
// Between the clone and exec the child runs async-signal-safe calls only, and credentials change
// through raw syscalls: glibc's wrappers would try to change them on the parent's other threads
// too, which the child does not have. Every signal is blocked across the clone, and the child
// resets every handler of the parent before it unblocks any, so none of qlaunch's handlers runs
// in it.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include "common/id_set.h"
#include "launcher/host/qemu_spawn.h"

namespace qlaunch::launcher {

// A CPU mask for sched_setaffinity, allocated before the clone (the child must not allocate).
struct CpuMask {
  cpu_set_t* set = nullptr;
  size_t bytes = 0;
  explicit CpuMask(const IdSet& cpus);
  ~CpuMask();
  CpuMask(const CpuMask&) = delete;
  CpuMask& operator=(const CpuMask&) = delete;
};

// Clones the child, which prepares itself as `spec` says (stdout and stderr appended to
// spec.log_file, created 0600), then
// execs spec.argv. Returns its pid once exec succeeded; throws std::runtime_error with the reason
// when the clone or exec fails (the child is reaped then). A step of the privilege drop that
// fails ends the child with status 126 and the reason in the log (the caller sees it end).
pid_t CloneAndExec(const SpawnSpec& spec);

}  // namespace qlaunch::launcher
