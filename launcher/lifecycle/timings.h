// Where the time of `qlaunch start` went, phase by phase, and the report it prints.
//
// Phases are consecutive wall-clock segments of one start, so they add up to (almost) total:
//   parse      read + validate the domain XML          topology  read the host (sysfs)
//   probe      QEMU capabilities (cached per binary)    plan      the pure planner
//   preflight  hugepage pools, /dev/kvm, state dir, mem-path dirs
//   spawn      create launcher memfds, fork+exec QEMU paused
//   qmp_ready  until QEMU's QMP greeting
//   prealloc   until preallocation is done: QEMU's reply to qmp_capabilities (its start-up
//              preallocation) and the launcher's population, which started right after the
//              memfds were created and overlapped spawn and qmp_ready
// Where QEMU preallocates, it does most of it while creating the machine, which QEMU 7.2 and
// 5.2 do before they greet on QMP: then qmp_ready holds QEMU's preallocation and prealloc only
// the rest. Launcher population is overlapped with QEMU's start instead; its remainder shows
// in prealloc.
//   cont       object-del of the thread-contexts, cont, query-status says running
// With --run-early the launcher's population goes on after cont: its remainder is added to
// prealloc, after cont. Two moments are reported besides the phases, in ms since the start:
//   running    the guest runs (query-status says so)
//   populated  all preallocated memory is in (QEMU's and the launcher's)
// Without --run-early, populated <= running; with it, the guest runs first.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace qlaunch::launcher {

enum class Phase { kParse, kTopology, kProbe, kPlan, kPreflight, kSpawn, kQmpReady, kPrealloc, kCont, kTotal };
inline constexpr size_t kPhaseCount = 10;

const char* PhaseName(Phase p);  // the JSON key: "parse", ..., "qmp_ready", ..., "total"

class Timings {
 public:
  using Clock = std::chrono::steady_clock;

  Timings() : start_(Clock::now()), mark_(start_) {}
  // Adds the time since the previous mark (or since construction) to `phase`; moves the mark.
  void Mark(Phase phase);
  void Add(Phase phase, Clock::duration d) { spent_[static_cast<size_t>(phase)] += d; }
  // Sets total to the time since construction.
  void Finish();
  double Ms(Phase phase) const;

  enum class Moment { kRunning, kPopulated };
  void Reached(Moment m) { moments_[static_cast<size_t>(m)] = Clock::now() - start_; }
  double Ms(Moment m) const;

 private:
  Clock::time_point start_, mark_;
  std::array<Clock::duration, kPhaseCount> spent_{};
  std::array<Clock::duration, 2> moments_{};
};

struct StartReport {
  std::string name;
  pid_t pid = 0;
  std::string prealloc;  // "qemu" | "launcher" | "none"
  std::string user;      // "USER:GROUP" QEMU runs as
  bool run_early = false;          // --run-early: the guest ran while its memory was filled
  std::vector<std::string> notes;  // what the start could not do and went on without
  Timings timings;
};

// {"name", "pid", "prealloc", "user", "run_early", "notes": [...], "timings_ms": {"parse", ..., "total",
// "running", "populated"}}; ms as numbers with three decimals.
nlohmann::json ToJson(const StartReport& report);
// A readable table: a header line naming the domain, pid and prealloc, then one row per phase.
std::string ToTable(const StartReport& report);

}  // namespace qlaunch::launcher
