// Who a domain's QEMU is, as the kernel sees it: its uid and gid (/proc/PID/status), whether
// they are leased to the domain (uid_lease.h), and which namespaces it has of its own rather than
// qlaunch's. For `dominfo --json` and `list --json`.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {

// {"uid": N, "gid": N, "leased": bool, "namespaces": ["mnt", "pid", ...]}; uid and gid null
// when the process cannot be read.
nlohmann::json ProcessIdentity(pid_t pid);

}  // namespace qlaunch::launcher
