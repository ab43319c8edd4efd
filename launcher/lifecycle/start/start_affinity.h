// NUMA-local preallocation by a QEMU without thread-context (< 7.2). Such a QEMU runs its
// prealloc threads wherever its main thread may run, and its sandbox forbids it to change
// affinities. So for private backends QEMU preallocates, the launcher:
//   1. before exec, restricts QEMU to the CPUs of the first preallocating backend's nodes
//      (its prealloc threads inherit that mask), and
//   2. once QMP answers qmp_capabilities (start-up preallocation is done), widens every QEMU
//      thread back to all CPUs qlaunch may use (SetProcessAffinity on /proc/<pid>/task).
// Only the first backend gets local threads: QEMU preallocates its backends one after the
// other with the same mask. QEMUs with thread-context need none of this.
#pragma once

#include "common/id_set.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// The CPUs to restrict QEMU to before exec; empty when no narrowing is needed (QEMU has
// thread-context, nothing is preallocated by QEMU, the backend is unbound, or its CPUs are
// already all usable CPUs).
IdSet PreallocAffinity(const qemu::LaunchPlan& plan, const qemu::QemuCaps& caps, const numa::HostTopology& host);

}  // namespace qlaunch::launcher
