// The real libvirt 9.0 on this host, for the tests that compare qlaunch with it
// (scripts/libvirt-up starts the daemons; CI does).
#pragma once

#include <string>
#include <vector>

#include "support/qlaunch_run.h"

namespace qlaunch::testing {

inline constexpr const char* kVirsh = "/usr/bin/virsh";
inline constexpr const char* kLibvirtUri = "qemu:///system";

// "" when libvirtd answers on qemu:///system, else why not (asked once per test binary).
const std::string& LibvirtUnreachable();

// virsh -c qemu:///system ARGS... (waits up to a minute).
RunResult Virsh(const std::vector<std::string>& args);

}  // namespace qlaunch::testing
