// Whether this host lets QEMU use KVM. One answer for every caller: the capability probe
// (caps.kvm, from which the planner notes that a KVM plan cannot run here) and start's pre-flight
// (which refuses <domain type='kvm'> before anything is created).
#pragma once

#include <filesystem>
#include <string>

namespace qlaunch::qemu {

// The KVM device this host is judged by: /dev/kvm, or $QLAUNCH_KVM_DEVICE where that is set
// (the tests set it to a missing path to run as a host without KVM would; see
// tests/hardware-features).
std::filesystem::path KvmDevicePath();

// True when `dev` opens read-write and reports the stable KVM API version (12). Creating a VM
// as well would cost ~15 ms of every start; QEMU reports that rare failure itself. On false,
// *why (when given) says what failed, naming the device.
bool KvmUsable(std::string* why = nullptr, const std::filesystem::path& dev = KvmDevicePath());

}  // namespace qlaunch::qemu
