// The inside of SequenceRunner (sequence_runner.h): one run of one sequence, the real domain and
// what the runner knows of it. Its steps and clean-up are in sequence_runner.cc, its checks of
// the invariants after each step in sequence_invariants.cc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/qlaunch_run.h"
#include "support/sequence_guest.h"
#include "support/sequence_runner.h"

namespace qlaunch::testing::seq {

// A check that failed: its name (the signature's second half) and what it saw.
struct Failed {
  std::string check, detail;
};

// Asks `ok` until it holds, every `every`, for `limit` at most; whether it held.
template <typename F>
bool WaitFor(F&& ok, std::chrono::milliseconds limit,
             std::chrono::milliseconds every = std::chrono::milliseconds(200)) {
  for (auto end = std::chrono::steady_clock::now() + limit;; std::this_thread::sleep_for(every)) {
    if (ok()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
  }
}

class SequenceRun {
 public:
  SequenceRun(const RunnerHost& host, size_t n)
      : host_(host), guest_(MakeSequenceGuest(host.boot, host.work / ("run-" + std::to_string(n)))) {}

  RunReport Go(const Sequence& seq);

 private:
  Env EnvOf(unsigned host) const {
    return {{"QLAUNCH_STATE_DIR", (host == 0 ? host_.root_a : host_.root_b).string()},
            {"QLAUNCH_CACHE_DIR", host_.cache.string()}};
  }
  RunResult Q(const std::vector<std::string>& args, unsigned host,
              std::chrono::milliseconds timeout = std::chrono::minutes(2)) {
    last_ = RunQlaunch(args, EnvOf(host), timeout);
    return last_;
  }
  HotplugGuest Console() const {
    HotplugGuest g = guest_.boot;
    g.serial = guest_.Console(console_);
    return g;
  }
  uint64_t LastCount() const {
    const std::vector<std::string> counts = Console().Reports("count");
    return counts.empty() ? 0 : std::stoull(counts.back());
  }

  std::optional<Failed> Boot();
  RunResult Exec(const Step& step, unsigned host);
  RunResult Migrate(unsigned from);
  std::optional<Failed> CheckStep(const Outcome& expected, const RunResult& r, const std::string& xml_before,
                                  pid_t pid_before, uint64_t pages_before);
  std::optional<Failed> CheckAll();
  std::optional<Failed> CheckWhere();
  std::optional<Failed> CheckHost();
  std::optional<Failed> CheckGuest();
  std::optional<Failed> CheckXml();
  nlohmann::json Monitor(const std::string& command);
  std::string LiveXml() { return Q({"dumpxml", SequenceDomain()}, model_.host).out; }
  std::optional<Failed> CleanUp();
  // The end of each host's last qemu.log, kept after each step and before each `list`, which
  // clears the entry of a QEMU that died, its log with it.
  void KeepQemuLogs();
  std::string Logs() const;

  const RunnerHost& host_;
  SequenceGuest guest_;
  ModelState model_ = InitialState();
  RunResult last_;
  unsigned console_ = 0;  // the console the guest writes to now
  unsigned saves_ = 0, migrations_ = 0;
  std::string sum_;
  uint64_t last_count_ = 0;
  pid_t pid_ = 0;
  std::string qemu_logs_[2];
};

}  // namespace qlaunch::testing::seq
