// How many vCPUs a domain runs, and how many of them QEMU starts with, with libvirt's meaning of
// <vcpu current> and <vcpus>.
#pragma once

#include "domain/domain_def.h"

namespace qlaunch::domain {

// The vCPUs that run: <vcpu current>, else all.
unsigned CurrentVcpus(const Vcpu& v);

// The vCPUs QEMU starts with (-smp): with <vcpus>, the enabled ones that are not hotpluggable
// (the other current ones are plugged before the guest runs, as they were when it was saved or
// migrated); without it, the current ones.
unsigned BootVcpus(const Vcpu& v);

}  // namespace qlaunch::domain
