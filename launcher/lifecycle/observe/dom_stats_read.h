// `qlaunch domstats`: what DomStats (launcher/lifecycle/observe/dom_stats.h) needs, read from a running
// domain: its live XML, QMP (query-status, query-balloon, query-cpus-fast, query-blockstats,
// query-block), its vCPU threads' times under /proc and its taps' counters under /sys/class/net.
#pragma once

#include <string>
#include <vector>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/dom_stats.h"

namespace qlaunch::launcher {

// Throws std::runtime_error for an unknown domain or one not running, WrongStateError while it
// is starting, std::runtime_error when QEMU does not answer.
std::vector<StatField> ReadDomStats(const StateDir& state, const std::string& name);

// A thread's times as libvirt reads them (nullopt when the thread is gone), and a tap's counters.
std::optional<VcpuTimes> ReadThreadTimes(pid_t pid, long tid);
std::optional<TapCounters> ReadTapCounters(const std::string& tap);
// The process's resident set in KiB (/proc/PID/stat), as libvirt's balloon.rss.
std::optional<uint64_t> ReadRssKib(pid_t pid);

}  // namespace qlaunch::launcher
