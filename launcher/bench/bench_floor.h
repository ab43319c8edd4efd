// The floor of `qlaunch bench`: what no launcher can take out of a start. Plain QEMU with the
// domain's own argv (as the qemu starter plans it: `domxml-to-native --prealloc qemu`, -S) but its
// guest memory cut to the minimum, timed from exec until it answers qmp_capabilities (QMP ready:
// its greeting may come before its main loop runs, the reply comes from it). What remains is QEMU's
// own start-up: loading, machine and device creation, the firmware, the chardevs. qlaunch's time to
// running minus this floor is what qlaunch (and cont) add; its total minus (floor + the kernel's
// populate time) is what a start costs beyond the two things it cannot avoid.
#pragma once

#include <string>
#include <vector>

#include "domain/domain_def.h"

namespace qlaunch::launcher {

// `def` with its guest memory cut to the minimum: every guest cell one page of the largest page
// size its <memoryBacking> names (2 MiB when none or smaller), no memory devices (pc-dimms,
// nvdimms, virtio-mem), <memory> and <currentMemory> their sum (one page for a guest without
// cells). Everything else (CPUs, devices, firmware, memory backing, NUMA binding) stays.
domain::DomainDef FloorDomain(domain::DomainDef def);

// The `floor-sized` starter: QEMU's start-up with the domain's full size mapped and nothing
// preallocated. Against the floor it shows what QEMU's own start-up adds with the size (under some
// accelerators, KVM's setup of the guest's memory grows with it); qlaunch's time to running minus
// it is what qlaunch adds at that size. The domain as it is, allocated on demand
// (<allocation mode='ondemand'>, no threads) ...
domain::DomainDef SizedFloorDomain(domain::DomainDef def);
// ... and, as hugepage backends are preallocated all the same (as libvirt does), its argv with
// every memory backend's "prealloc" false and no prealloc-threads or prealloc-context (a
// thread-context stays, unused, as in the floor's argv). Arguments other than -object JSON of a
// memory-backend-* stay as they are.
std::vector<std::string> WithoutPrealloc(std::vector<std::string> argv);

}  // namespace qlaunch::launcher
