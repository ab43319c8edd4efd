// The plan step of `qlaunch start` (launcher/lifecycle/start/start.cc): the planner's LaunchPlan with
// the launcher memfds on fd numbers that are free in this process, and what the start reports
// and waits for from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// qemu::PlanLaunch, then, when the launcher memfds' fd numbers (they are in the argv) are not
// all free here, planned again from the first free block (popts->first_launcher_fd moves).
qemu::LaunchPlan PlanStart(const domain::DomainDef& def, const numa::HostTopology& host, const qemu::QemuCaps& caps,
                           qemu::PlanOptions* popts);

// "launcher", "qemu" or "none": who preallocates (the launcher when it fills any backend).
const char* PreallocSummary(const qemu::LaunchPlan& plan);
// The backends the launcher fills (one memfd each).
size_t LauncherBackendCount(const qemu::LaunchPlan& plan);
// The bytes QEMU preallocates itself.
uint64_t QemuPreallocBytes(const qemu::LaunchPlan& plan);
// Backend id -> where its memory comes from: `taken`'s word for the backends there (the warm
// pool's), else "launcher", "qemu" or "none" by who preallocates it (StartReport::memory_sources).
std::map<std::string, std::string> MemorySources(const qemu::LaunchPlan& plan,
                                                 const std::map<std::string, std::string>& taken);

}  // namespace qlaunch::launcher
