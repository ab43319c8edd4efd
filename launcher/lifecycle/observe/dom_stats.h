// The fields of `qlaunch domstats`, named and ordered as libvirt 9.0's `virsh domstats` prints
// its groups state, balloon, vcpu, net and block, computed from QEMU's QMP replies and a few
// host facts (a vCPU thread's times, a tap's counters) gathered by launcher/lifecycle/observe/dom_stats_read.h.
// Pure: tested on tables of replies.
//
// Where qlaunch knows less than libvirt: state.reason of a running domain is 1 (booted) also
// after a resume (libvirt says 5, unpaused; qlaunch does not record resumes); a paused one gets
// QEMU's run state mapped as libvirt maps it (qemuMonitorVMStatusToPausedReason).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {

// A vCPU thread's times in ns, as libvirt reads them (/proc/PID/task/TID/stat utime+stime,
// /proc/PID/task/TID/sched wait_sum, /proc/PID/task/TID/schedstat run delay).
struct VcpuTimes {
  uint64_t time = 0, wait = 0, delay = 0;
};

// A tap's counters as the host sees them (/sys/class/net/TAP/statistics): the guest's rx is the
// tap's tx, so libvirt swaps them, and so does DomStats.
struct TapCounters {
  uint64_t rx_bytes = 0, rx_packets = 0, rx_errors = 0, rx_dropped = 0;
  uint64_t tx_bytes = 0, tx_packets = 0, tx_errors = 0, tx_dropped = 0;
};

struct StatsDisk {
  std::string target, source, alias;  // <target dev>, <source file|dev> ("" for none), <alias name>
};
// The <memballoon>'s alias ("" for none or model='none'), whose guest-stats QOM property has the
// guest's memory statistics.
std::string StatsBalloonAlias(const std::string& live_xml, const std::string& file);
struct StatsNic {
  std::string tap;                     // <target dev>; "" for user networking (libvirt skips it)
  std::optional<TapCounters> counters;  // nullopt when the tap could not be read
};

struct DomStatsInput {
  nlohmann::json status;      // query-status
  nlohmann::json balloon;     // query-balloon; null when the domain has no balloon
  nlohmann::json guest_stats;  // qom-get of the balloon's guest-stats; null when none
  std::optional<uint64_t> rss_kib;  // QEMU's resident set (/proc/PID/stat), as libvirt's balloon.rss
  nlohmann::json cpus;        // query-cpus-fast
  nlohmann::json blockstats;  // query-blockstats
  nlohmann::json block;       // query-block
  uint64_t memory_kib = 0;    // the domain's total memory (libvirt's virDomainDefGetMemoryTotal)
  unsigned vcpus_max = 0;
  unsigned vcpus_current = 0;
  std::vector<StatsDisk> disks;
  std::vector<StatsNic> nics;
  std::map<long, VcpuTimes> vcpu_times;  // by thread-id (query-cpus-fast)
};

// One field: its name and its value, a number or a string (as virsh prints it).
using StatField = std::pair<std::string, nlohmann::json>;

// The fields, in virsh's order. Throws std::runtime_error for a reply that lacks what the field
// needs (naming the command).
std::vector<StatField> DomStats(const DomStatsInput& in);

// The disks and interfaces DomStats reads, from a live domain XML (launcher/lifecycle/change/live_xml.h).
// Throws DiagnosticError when it does not parse.
std::vector<StatsDisk> StatsDisks(const std::string& live_xml, const std::string& file);
std::vector<std::string> StatsTaps(const std::string& live_xml, const std::string& file);

// "Domain: 'NAME'\n  key=value\n...\n\n" as virsh prints one record; a flat {"key": value} object.
std::string DomStatsText(const std::string& name, const std::vector<StatField>& fields);
nlohmann::json DomStatsJson(const std::vector<StatField>& fields);

}  // namespace qlaunch::launcher
