// The host's processes as the launch tests look at them (/proc): which are gone, which run on a
// path or hold an fd, this test's children, and the ids and capabilities a QEMU runs with.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace qlaunch::testing {

// The fields of /proc/PID/status ("Uid" -> "999\t999\t999\t999", ...).
std::map<std::string, std::string> ProcStatus(pid_t pid);
// QEMU runs as ids of its domain's own, leased (real, effective, saved and fs ids; uid = gid),
// in group kvm, with every capability set empty, no_new_privs and a seccomp filter (-sandbox).
void ExpectUnprivileged(pid_t pid);
// The real uid of the process, as a number ("" when it is gone).
std::string QemuIdOf(pid_t pid);
// setpriv to the ids of the process (its uid, gid and supplementary groups: what code running in
// that QEMU has), up to the "--" that precedes the command.
std::vector<std::string> SetprivTo(pid_t pid);

// The process is gone: no /proc entry, or a zombie (exited, not yet reaped) with no thread
// still exiting.
bool PidGone(pid_t pid);
// Live (non-zombie) processes whose command line contains `needle`.
std::vector<pid_t> LivePidsWithCmdline(const std::string& needle);
// Processes with an fd whose link target contains `needle` (e.g. "memfd:qlaunch:NAME").
std::vector<pid_t> PidsHoldingFd(const std::string& needle);
// Live (non-zombie) children of this process: with LaunchTest, whose SetUp makes the test a
// child subreaper, that includes every process a qlaunch left behind (a QEMU, a probing QEMU).
std::vector<pid_t> LiveChildren();

}  // namespace qlaunch::testing
