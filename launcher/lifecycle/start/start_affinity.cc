#include "launcher/lifecycle/start/start_affinity.h"

#include "prealloc/worker_plan.h"

namespace qlaunch::launcher {

IdSet PreallocAffinity(const qemu::LaunchPlan& plan, const qemu::QemuCaps& caps, const numa::HostTopology& host) {
  if (caps.thread_context) return {};
  for (const auto& b : plan.backends) {
    if (b.prealloc != qemu::PreallocBy::kQemu) continue;
    if (b.host_nodes.Empty()) return {};
    IdSet cpus = b.prealloc_cpus.Empty() ? prealloc::WorkerCpus(host, b.host_nodes)
                                         : b.prealloc_cpus.Intersect(host.usable_cpus);
    if (cpus.Empty() || cpus == host.usable_cpus) return {};
    return cpus;
  }
  return {};
}

}  // namespace qlaunch::launcher
