// The qlaunch starter of `qlaunch bench` (launcher/bench/bench_starters.h): this binary's
// `start --json`, timed from fork to exit, its timings_ms kept; then the domain destroyed.
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "launcher/bench/bench_accounting.h"
#include "launcher/bench/bench_starters.h"
#include "launcher/bench/bench_support.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/destroy.h"
#include "launcher/lifecycle/start/timings.h"

namespace qlaunch::launcher {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using bench::ThrowIfInterrupted;

namespace {

// ---- qlaunch start ----------------------------------------------------------------------------

// timings_ms of `qlaunch start --json`, every key in its order (new phases are kept too), completed
// from outside (bench_accounting.h) when start reported its clock_ns.
Phases ParseTimings(const std::string& out, const ChildRun& child) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("qlaunch start --json printed no JSON (" + std::string(e.what()) + "): " + out);
  }
  Phases phases;
  if (j.is_object() && j.contains("timings_ms") && j["timings_ms"].is_object())
    for (const auto& [key, value] : j["timings_ms"].items())
      if (value.is_number()) phases.emplace_back(key, value.get<double>());
  if (phases.empty()) throw std::runtime_error("qlaunch start --json printed no timings_ms: " + out);
  // A JSON object has its keys sorted by name: back in the order start measures them in, the
  // phases this binary does not know (yet) after those, total last.
  auto rank = [](const std::string& key) {
    for (size_t i = 0; i < kPhaseCount; ++i)
      if (key == PhaseName(static_cast<Phase>(i))) return static_cast<Phase>(i) == Phase::kTotal ? kPhaseCount + 1 : i;
    return IsPhaseKey(key) ? kPhaseCount : kPhaseCount + 2;
  };
  std::stable_sort(phases.begin(), phases.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  if (j.contains("clock_ns") && j["clock_ns"].is_object() && j["clock_ns"].contains("entry") &&
      j["clock_ns"].contains("end")) {
    auto ns = [](Clock::time_point t) {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    };
    phases = AccountFromOutside(phases, j["clock_ns"]["entry"].get<int64_t>(), j["clock_ns"]["end"].get<int64_t>(),
                                ns(child.forked), ns(child.exited));
  }
  return phases;
}

// Destroys the domain if a start left it running; never throws (a failure is already being
// reported).
void DestroyIfRunning(const std::string& name) noexcept {
  try {
    DestroyDomain(StateDir(), name);
  } catch (const NotRunningError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qlaunch: warning: bench: cannot destroy %s: %s\n", name.c_str(), e.what());
  }
}

class QlaunchStarter : public Starter {
 public:
  explicit QlaunchStarter(const BenchConfig& cfg) : cfg_(cfg) {}
  std::string name() const override { return "qlaunch"; }

  StarterRun Run() override {
    // This very binary, even if the file was replaced meanwhile.
    std::vector<std::string> argv = {"/proc/self/exe", "start", "--json"};
    if (!cfg_.qemu.empty()) argv.insert(argv.end(), {"--qemu", cfg_.qemu});
    argv.insert(argv.end(), cfg_.start_options.begin(), cfg_.start_options.end());
    argv.push_back(cfg_.domain_xml);
    ChildRun child = RunChild(argv, cfg_.work_dir, "qlaunch-start", cfg_.interrupt);
    StarterRun run = StarterRun::Between(child.forked, child.exited);
    try {
      if (!child.ok()) throw std::runtime_error("qlaunch start " + child.Describe() + child.ErrTail());
      run.phases = ParseTimings(child.out, child);
    } catch (const std::exception&) {
      DestroyIfRunning(cfg_.name);
      ThrowIfInterrupted(cfg_.interrupt);
      throw;
    }
    DestroyDomain(StateDir(), cfg_.name);
    return run;
  }

 private:
  BenchConfig cfg_;
};

}  // namespace

std::unique_ptr<Starter> MakeQlaunchStarter(const BenchConfig& cfg) { return std::make_unique<QlaunchStarter>(cfg); }

}  // namespace qlaunch::launcher
