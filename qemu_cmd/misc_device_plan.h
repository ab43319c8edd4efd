// The misc devices as libvirt 9.0 renders them (qemu_cmd/misc_device_plan.cc), in its argv
// order after graphics, video and sound: the watchdog (+ -watchdog-action), the memory
// balloon (virtio when <memballoon> is absent, as libvirt defaults on x86), the rngs, pvpanic.
#pragma once

#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

// -watchdog-action's value for a <watchdog action>: libvirt does a dump itself after pausing
// the guest ("dump" -> pause); QEMU 5.2 and 7.2 both take -watchdog-action.
std::string WatchdogAction(const std::string& action);

}  // namespace qlaunch::qemu
