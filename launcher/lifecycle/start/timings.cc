#include "launcher/lifecycle/start/timings.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "launcher/lifecycle/start/process_clock.h"

namespace qlaunch::launcher {

const char* PhaseName(Phase p) {
  switch (p) {
    case Phase::kStartup: return "startup";
    case Phase::kCli: return "cli";
    case Phase::kParse: return "parse";
    case Phase::kTopology: return "topology";
    case Phase::kProbe: return "probe";
    case Phase::kPlan: return "plan";
    case Phase::kPreflight: return "preflight";
    case Phase::kPoolLock: return "pool_lock";
    case Phase::kMemfd: return "memfd";
    case Phase::kSpawn: return "spawn";
    case Phase::kQmpReady: return "qmp_ready";
    case Phase::kPrealloc: return "prealloc";
    case Phase::kUnmap: return "unmap";
    case Phase::kCont: return "cont";
    case Phase::kHandOver: return "hand_over";
    case Phase::kReturn: return "return";
    case Phase::kTotal: return "total";
  }
  return "?";
}

Timings::Timings() : Timings(ProcessClock::Entry(), ProcessClock::StartupEstimate()) {}

Timings::Timings(Clock::time_point entry, Clock::duration startup) : start_(entry), mark_(entry), startup_(startup) {
  spent_[static_cast<size_t>(Phase::kStartup)] = startup;
}

void Timings::Mark(Phase phase) {
  auto now = Clock::now();
  Add(phase, now - mark_);
  mark_ = now;
}

void Timings::Finish() {
  spent_[static_cast<size_t>(Phase::kTotal)] = startup_ + (mark_ - start_);
}

double Timings::UnaccountedMs() const {
  Clock::duration sum{0};
  for (size_t i = 0; i < kPhaseCount; ++i)
    if (static_cast<Phase>(i) != Phase::kTotal) sum += spent_[i];
  return std::chrono::duration<double, std::milli>(spent_[static_cast<size_t>(Phase::kTotal)] - sum).count();
}

int64_t Timings::EntryNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(start_.time_since_epoch()).count();
}

int64_t Timings::LastMarkNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(mark_.time_since_epoch()).count();
}

double Timings::Ms(Phase phase) const {
  return std::chrono::duration<double, std::milli>(spent_[static_cast<size_t>(phase)]).count();
}

double Timings::Ms(Moment m) const {
  return std::chrono::duration<double, std::milli>(moments_[static_cast<size_t>(m)]).count();
}

nlohmann::json ToJson(const StartReport& report) {
  auto three_decimals = [](double ms) { return std::round(ms * 1000.0) / 1000.0; };
  nlohmann::json phases = nlohmann::json::object();
  for (size_t i = 0; i < kPhaseCount; ++i) {
    Phase p = static_cast<Phase>(i);
    phases[PhaseName(p)] = three_decimals(report.timings.Ms(p));
  }
  phases["unaccounted"] = three_decimals(report.timings.UnaccountedMs());
  phases["running"] = three_decimals(report.timings.Ms(Timings::Moment::kRunning));
  phases["populated"] = three_decimals(report.timings.Ms(Timings::Moment::kPopulated));
  nlohmann::json j{{"name", report.name},
                   {"pid", report.pid},
                   {"prealloc", report.prealloc},
                   {"user", report.user},
                   {"run_early", report.run_early},
                   {"memory_sources", report.memory_sources},
                   {"notes", report.notes},
                   {"timings_ms", phases},
                   {"clock_ns", {{"entry", report.timings.EntryNs()}, {"end", report.timings.LastMarkNs()}}}};
  if (!report.incoming.empty()) j["incoming"] = report.incoming;
  return j;
}

std::string ToTable(const StartReport& report) {
  std::string out = "domain " + report.name +
                    (report.incoming.empty() ? " is running" : " waits for its migration on " + report.incoming) +
                    " (pid " + std::to_string(report.pid) +
                    (report.user.empty() ? "" : ", user " + report.user) + ", preallocation by " + report.prealloc +
                    ")\n";
  for (const auto& n : report.notes) out += "  note: " + n + "\n";
  char line[96];
  std::snprintf(line, sizeof line, "  %-11s %10s\n", "phase", "ms");
  out += line;
  for (size_t i = 0; i < kPhaseCount; ++i) {
    Phase p = static_cast<Phase>(i);
    if (p == Phase::kTotal) out += "  ----------- ----------\n";
    std::snprintf(line, sizeof line, "  %-11s %10.1f\n", PhaseName(p), report.timings.Ms(p));
    out += line;
  }
  std::snprintf(line, sizeof line, "  %-11s %10.1f\n", "unaccounted", report.timings.UnaccountedMs());
  out += line;
  if (report.incoming.empty()) {
    std::snprintf(line, sizeof line, "  guest running after %.1f ms, memory populated after %.1f ms%s\n",
                  report.timings.Ms(Timings::Moment::kRunning), report.timings.Ms(Timings::Moment::kPopulated),
                  report.run_early ? " (--run-early)" : "");
    out += line;
  }
  return out;
}

}  // namespace qlaunch::launcher
