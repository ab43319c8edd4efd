// Where the time of `qlaunch start` went, phase by phase, and the report it prints.
//
// The phases are consecutive wall-clock segments that cover the process's life from its exec to
// the moment the report is printed (docs/usage.md lists them for users):
//   startup    fork/exec until qlaunch's first static initialiser (process_clock.h: the dynamic
//              loader, the shared libraries' initialisers); estimated from /proc/self/schedstat
//   cli        qlaunch's own initialisers, building the CLI and parsing the arguments
//   parse      read + validate the domain XML          topology  read the host (sysfs)
//   probe      QEMU capabilities (cached per binary)    plan      the pure planner
//   preflight  refusing a running domain, the host checks, the state dir, labels, cgroup,
//              mem-path dirs, device host side
//   pool_lock  waiting for the hugepage pool lock and re-reading the free pages under it
//   memfd      creating and mapping the launcher's memfds, starting its workers
//   spawn      fork+exec QEMU paused, handing it its fds
//   qmp_ready  until QEMU's QMP greeting (connecting included)
//   prealloc   until preallocation is done: QEMU's reply to qmp_capabilities (its start-up
//              preallocation) and the launcher's population, which started in memfd and
//              overlapped spawn and qmp_ready
// Where QEMU preallocates, it does most of it while creating the machine, which QEMU 7.2 and
// 5.2 do before they greet on QMP: then qmp_ready holds QEMU's preallocation and prealloc only
// the rest.
//   unmap      unmapping and closing the launcher's memfds (QEMU's copies keep the pages); without
//              --run-early done while QEMU handles cont, so this phase also holds the object-del of
//              the thread-contexts and sending cont
//   cont       the rest of cont, until QEMU says running (RESUME with cont's reply, else query-status)
//   hand_over  QMP closed, the state committed, QEMU left to run on its own
//   return     leaving StartDomain (its guards) until the report is rendered
// With --run-early the launcher's population goes on after cont: its remainder is added to
// prealloc (and unmap), after cont. `total` is exec to the last mark (startup + everything
// since Entry()); `unaccounted` is total minus the sum of the phases: the time no phase holds.
// What follows the last mark (printing the report, returning from main, exit) can only be seen
// from outside: `qlaunch bench` adds it as `exit` (bench_qlaunch.cc).
// Two moments are reported besides the phases, in ms since exec (the same origin as total):
//   running    the guest runs (QEMU said so: RESUME, else query-status)
//   populated  all preallocated memory is in (QEMU's and the launcher's)
// Without --run-early, populated <= running; with it, the guest runs first.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "domain/domain_def.h"

namespace qlaunch::launcher {

enum class Phase {
  kStartup, kCli, kParse, kTopology, kProbe, kPlan, kPreflight, kPoolLock, kMemfd, kSpawn, kQmpReady, kPrealloc,
  kUnmap, kCont, kHandOver, kReturn, kTotal
};
inline constexpr size_t kPhaseCount = 17;

const char* PhaseName(Phase p);  // the JSON key: "startup", ..., "qmp_ready", ..., "total"

class Timings {
 public:
  using Clock = std::chrono::steady_clock;

  // The process's own: its entry and start-up (process_clock.h); startup is booked at once.
  Timings();
  // An explicit origin (tests): `entry` is where the marks start, `startup` the time before it.
  Timings(Clock::time_point entry, Clock::duration startup);
  // Adds the time since the previous mark (or since entry) to `phase`; moves the mark.
  void Mark(Phase phase);
  void Add(Phase phase, Clock::duration d) { spent_[static_cast<size_t>(phase)] += d; }
  // Sets total to startup plus the time from entry to the last mark.
  void Finish();
  double Ms(Phase phase) const;
  // total minus the sum of the phases (after Finish).
  double UnaccountedMs() const;
  // The entry and the last mark as CLOCK_MONOTONIC nanoseconds (for the bench's outside view).
  int64_t EntryNs() const;
  int64_t LastMarkNs() const;

  enum class Moment { kRunning, kPopulated };
  void Reached(Moment m) { moments_[static_cast<size_t>(m)] = startup_ + (Clock::now() - start_); }
  double Ms(Moment m) const;

 private:
  Clock::time_point start_, mark_;
  Clock::duration startup_{0};
  std::array<Clock::duration, kPhaseCount> spent_{};
  std::array<Clock::duration, 2> moments_{};
};

struct StartReport {
  std::string name;
  pid_t pid = 0;
  std::string prealloc;  // "qemu" | "launcher" | "none"
  std::string user;      // "USER:GROUP" QEMU runs as
  bool run_early = false;          // --run-early: the guest ran while its memory was filled
  std::string incoming;            // --incoming: the URI QEMU listens on for the guest ("" otherwise)
  std::vector<std::string> notes;  // what the start could not do and went on without
  // Backend id -> where its memory came from: "warm" (a file of the warm pool), "launcher"
  // (qlaunch filled it), "qemu" (QEMU preallocated it), "none" (faulted in as the guest runs).
  std::map<std::string, std::string> memory_sources;
  domain::Lifecycle lifecycle;     // the domain's <on_poweroff> etc., for `run` (not in the JSON)
  Timings timings;
};

// {"name", "pid", "prealloc", "user", "run_early", "memory_sources": {id: source}, ["incoming",] "notes": [...], "timings_ms": {"startup", ..., "total",
// "unaccounted", "running", "populated"}, "clock_ns": {"entry", "end"}}; ms as numbers with three
// decimals; clock_ns: EntryNs() and LastMarkNs().
nlohmann::json ToJson(const StartReport& report);
// A readable table: a header line naming the domain, pid and prealloc, then one row per phase.
std::string ToTable(const StartReport& report);

}  // namespace qlaunch::launcher
