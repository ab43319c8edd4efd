// PlanLaunch: the pure planner. (DomainDef, HostTopology, QemuCaps, options) -> LaunchPlan.
// No I/O: everything it needs is in its arguments, so it is tested on fixture hosts.
#pragma once

#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

// Throws DiagnosticError for configurations it cannot plan (unknown host node, no hugetlbfs
// mount for a page size, ...), naming the file and line of the element responsible.
LaunchPlan PlanLaunch(const domain::DomainDef& def, const numa::HostTopology& host, const QemuCaps& caps,
                      const PlanOptions& opts);

}  // namespace qlaunch::qemu
