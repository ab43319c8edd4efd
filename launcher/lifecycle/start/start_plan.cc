#include "launcher/lifecycle/start/start_plan.h"

#include "launcher/host/qemu_spawn.h"
#include "qemu_cmd/planner.h"

namespace qlaunch::launcher {

qemu::LaunchPlan PlanStart(const domain::DomainDef& def, const numa::HostTopology& host, const qemu::QemuCaps& caps,
                           qemu::PlanOptions* popts) {
  qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, *popts);
  const int launcher_fds = static_cast<int>(LauncherBackendCount(plan));
  if (launcher_fds > 0) {
    int first = FreeFdBlock(popts->first_launcher_fd, launcher_fds);
    if (first != popts->first_launcher_fd) {
      popts->first_launcher_fd = first;
      plan = qemu::PlanLaunch(def, host, caps, *popts);
    }
  }
  return plan;
}
const char* PreallocSummary(const qemu::LaunchPlan& plan) {
  bool launcher = false, qemu_side = false;
  for (const auto& b : plan.backends) {
    launcher |= b.prealloc == qemu::PreallocBy::kLauncher;
    qemu_side |= b.prealloc == qemu::PreallocBy::kQemu;
  }
  return launcher ? "launcher" : qemu_side ? "qemu" : "none";
}

size_t LauncherBackendCount(const qemu::LaunchPlan& plan) {
  size_t n = 0;
  for (const auto& b : plan.backends) n += b.prealloc == qemu::PreallocBy::kLauncher;
  return n;
}

std::map<std::string, std::string> MemorySources(const qemu::LaunchPlan& plan,
                                                 const std::map<std::string, std::string>& taken) {
  std::map<std::string, std::string> out;
  for (const auto& b : plan.backends) {
    auto it = taken.find(b.id);
    out[b.id] = it != taken.end()                             ? it->second
                : b.prealloc == qemu::PreallocBy::kLauncher ? "launcher"
                : b.prealloc == qemu::PreallocBy::kQemu     ? "qemu"
                                                            : "none";
  }
  return out;
}

uint64_t QemuPreallocBytes(const qemu::LaunchPlan& plan) {
  uint64_t n = 0;
  for (const auto& b : plan.backends)
    if (b.prealloc == qemu::PreallocBy::kQemu) n += b.size_bytes;
  return n;
}

}  // namespace qlaunch::launcher
