// PlanPrealloc: who preallocates each backend (QEMU or the launcher), the thread-contexts
// QEMU's preallocation threads run in, and how many threads. This is where qlaunch goes
// beyond libvirt: every backend QEMU preallocates gets a context (not only bound ones),
// CPU-less host nodes are replaced by their nearest CPU nodes, and backends with the same
// CPU set share one context. Pure: no I/O.
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "common/id_set.h"
#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

// QEMU caps the number of preallocation threads (MAX_MEM_PREALLOC_THREAD_COUNT): 16, and 32
// from QEMU 11. qlaunch's own preallocator has no cap.
unsigned QemuPreallocThreadCap(const QemuCaps& caps);

// The CPUs this process may use: host.usable_cpus, or every node's CPUs when that is unknown.
IdSet UsableCpus(const numa::HostTopology& host);

// The host nodes the threads populating `b` should run on: the backend's host-nodes, each
// CPU-less node replaced by its nearest CPU node(s); with no host-nodes, the nodes of the
// usable CPUs (narrowed by <emulatorpin> when given). Only nodes with usable CPUs are kept,
// so the result may be empty.
IdSet PreallocNodes(const MemoryBackend& b, const domain::DomainDef& def, const numa::HostTopology& host);

// Threads for a CPU set when the domain does not say: one per CPU, at least 1, at most `cap`
// (0: no cap).
unsigned DefaultPreallocThreads(const IdSet& cpus, unsigned cap = 0);

// Who preallocates one backend, and why (MemoryBackend::prealloc_reason). Pure: the rows of the
// decision table in docs/planner.md. `cpus` are the CPUs near the backend's memory.
struct PreallocChoice {
  PreallocBy by = PreallocBy::kQemu;
  std::string reason;
};
PreallocChoice ChoosePreallocator(const MemoryBackend& b, const QemuCaps& caps, PreallocMode mode, const IdSet& cpus);

// Takes the backends from PlanMemory (prealloc kQemu = "must be preallocated") and decides,
// per PlanOptions::prealloc and the caps:
//  - who preallocates, by ChoosePreallocator (prealloc_reason says why);
//  - launcher backends (shared memfds): prealloc kLauncher, mem_path /proc/self/fd/<N>,
//    launcher_fd N = opts.first_launcher_fd + index among launcher backends;
//  - thread-contexts for QEMU-preallocated backends (when caps.thread_context and
//    caps.prealloc_context), shared between backends with equal CPU sets;
//  - prealloc_threads (when caps.prealloc_threads), prealloc_cpus, launcher_threads.
// Returns the contexts in the order of their first users. Warnings go to *notes.
std::vector<ThreadContext> PlanPrealloc(std::vector<MemoryBackend>& backends, const domain::DomainDef& def,
                                        const numa::HostTopology& host, const QemuCaps& caps,
                                        const PlanOptions& opts, std::vector<Diagnostic>* notes);

}  // namespace qlaunch::qemu
