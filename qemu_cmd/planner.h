// PlanLaunch: the pure planner. (DomainDef, HostTopology, QemuCaps, options) -> LaunchPlan.
// No I/O: everything it needs is in its arguments, so it is tested on fixture hosts.
#pragma once

#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

// The note a plan carries when <domain type='kvm'> is planned for a QEMU that cannot use KVM on
// this host: the plan still says -accel kvm (a command line for a host that has it), and
// `validate` turns the note into start's own refusal.
inline constexpr const char* kKvmUnusableNote =
    "type='kvm' needs KVM, which this QEMU cannot use on this host: this command line is for a host "
    "with KVM (qlaunch start refuses it here; <domain type='qemu'> runs the guest under TCG)";

// Throws DiagnosticError for configurations it cannot plan (unknown host node, no hugetlbfs
// mount for a page size, ...), naming the file and line of the element responsible.
LaunchPlan PlanLaunch(const domain::DomainDef& def, const numa::HostTopology& host, const QemuCaps& caps,
                      const PlanOptions& opts);

}  // namespace qlaunch::qemu
