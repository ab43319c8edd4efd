// Whether this host lets QEMU use KVM. One answer for every caller: the capability probe
// (caps.kvm, from which the planner falls back to TCG with a note) and start's pre-flight
// (which refuses <domain type='kvm'> before anything is created).
#pragma once

#include <filesystem>
#include <string>

namespace qlaunch::qemu {

// True when `dev` opens read-write and reports the stable KVM API version (12). Creating a VM
// as well would cost ~15 ms of every start; QEMU reports that rare failure itself. On false,
// *why (when given) says what failed, naming the device.
bool KvmUsable(std::string* why = nullptr, const std::filesystem::path& dev = "/dev/kvm");

}  // namespace qlaunch::qemu
