// Model-based tests of verb sequences (issue 34): chains of run-time verbs on one booted guest,
// generated from a seed by walking the domain's states (support/verb_generator.h), each step
// checked against the model (support/sequence_runner.h: the guest counts on with its memory
// unchanged, the live XML agrees with the model and with QEMU, hugepages accounted for, nothing
// leaked). A failing sequence is shrunk to a minimal one, each candidate on a fresh guest, and
// printed with the cause.
//
// Bounded for CI by default; scripts/soak runs the long form through the same test with:
//   QLAUNCH_SEQ_COUNT    sequences to run (default 3)
//   QLAUNCH_SEQ_MAX_LEN  steps per sequence at most (default 5; at least half of it)
//   QLAUNCH_SEQ_SEED     the seed of the first sequence; sequence i has seed + i (default 34)
//   QLAUNCH_SEQ_STEPS    one given sequence instead ("setvcpus 2; attach-disk; save; restore")
//   QLAUNCH_SEQ_BUDGET_S wall time after which no sequence or shrinking run starts (default 200;
//                        0: none)
//   QLAUNCH_SEQ_SHRINK_RUNS  candidate runs per failure at most (default 16; 0: no shrinking)
//   QLAUNCH_SEQ_SUMMARY  a file to write the summary to as JSON
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/sequence_guest.h"
#include "support/sequence_runner.h"
#include "support/sequence_shrinker.h"
#include "support/verb_generator.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace seq;
using Clock = std::chrono::steady_clock;

// Two copies of the guest at the most (a migration's source and destination), each its memory and
// its DIMM, in 2 MiB pages.
constexpr uint64_t kPoolPages = 2 * (Limits{}.memory_mib + Limits{}.dimm_mib) / 2;

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

void Say(const std::string& line) {
  std::printf("[ sequence ] %s\n", line.c_str());
  std::fflush(stdout);
}

class VerbSequenceTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (IsSkipped()) return;
    if (std::string why = WhyNoHugepageQemu72(); !why.empty()) GTEST_SKIP() << why;
    boot_ = MakeSequenceBoot(tmp() / "boot");
    if (!boot_.missing.empty()) GTEST_SKIP() << boot_.missing;
    pool_.emplace(HugepagePool::Exactly(kPoolPages));
    if (!pool_->ok()) GTEST_SKIP() << pool_->error();
    OtherHost("b");  // TearDown clears it too
    fs::create_directories(OtherStateDir("b"));
  }
  void TearDown() override {
    LaunchTest::TearDown();
    pool_.reset();
  }
  SequenceRunner Runner() {
    return SequenceRunner({tmp(), StateDir(), OtherStateDir("b"), tmp() / "cache", boot_});
  }

  HotplugGuest boot_;
  std::optional<HugepagePool> pool_;
};

// Runs `seqs` (seed, sequence) one after the other until the budget is spent, shrinks each
// failure, and fails the test with every minimal sequence; returns the summary.
json RunAll(SequenceRunner& runner, const std::vector<std::pair<uint64_t, Sequence>>& seqs) {
  const uint64_t budget_s = EnvNumber("QLAUNCH_SEQ_BUDGET_S", 200);
  const uint64_t shrink_runs = EnvNumber("QLAUNCH_SEQ_SHRINK_RUNS", 16);
  const auto t0 = Clock::now();
  auto over_budget = [&] { return budget_s && Clock::now() - t0 >= std::chrono::seconds(budget_s); };
  json summary = {{"sequences", 0}, {"passed", 0}, {"verbs", json::object()}, {"failures", json::array()}};
  for (const auto& [seed, seq] : seqs) {
    if (over_budget()) {
      Say("budget of " + std::to_string(budget_s) + " s spent: " + std::to_string(summary["sequences"].get<int>()) +
          " of " + std::to_string(seqs.size()) + " sequences ran");
      break;
    }
    Say("seed " + std::to_string(seed) + ": " + SequenceText(seq));
    const RunReport r = runner.Run(seq);
    summary["sequences"] = summary["sequences"].get<int>() + 1;
    for (const auto& [verb, n] : r.verbs) summary["verbs"][verb] = summary["verbs"].value(verb, 0) + n;
    Say("seed " + std::to_string(seed) + ": " + r.Summary());
    if (r.passed) {
      summary["passed"] = summary["passed"].get<int>() + 1;
      continue;
    }
    // Steps after the failing one never ran: shrinking starts from what did.
    Sequence ran = seq;
    if (r.failed_at < ran.size()) ran.resize(r.failed_at + 1);
    RunReport last_failure = r;
    const ShrinkResult s = Shrink(
        ran,
        [&](const Sequence& candidate) {
          const RunReport c = runner.Run(candidate);
          Say("  shrinking: " + SequenceText(candidate) + " -> " + c.Summary());
          if (c.signature != r.signature) return false;
          last_failure = c;
          return true;
        },
        shrink_runs, over_budget);
    const std::string minimal = SequenceText(s.minimal);
    Say("seed " + std::to_string(seed) + ": minimal" + (s.complete ? "" : " so far (shrinking stopped)") + " after " +
        std::to_string(s.runs) + " runs: " + minimal);
    summary["failures"].push_back({{"seed", seed},
                                   {"sequence", SequenceText(seq)},
                                   {"signature", r.signature},
                                   {"minimal", minimal},
                                   {"minimal_complete", s.complete},
                                   {"cause", last_failure.failure}});
    ADD_FAILURE() << "sequence of seed " << seed << " failed [" << r.signature << "]: " << SequenceText(seq)
                  << "\nminimal sequence" << (s.complete ? "" : " so far") << ": " << minimal << "\n"
                  << last_failure.failure;
  }
  if (const char* path = std::getenv("QLAUNCH_SEQ_SUMMARY")) std::ofstream(path) << summary.dump(1) << "\n";
  Say("summary: " + std::to_string(summary["sequences"].get<int>()) + " sequences, " +
      std::to_string(summary["passed"].get<int>()) + " passed; verbs " + summary["verbs"].dump());
  return summary;
}

TEST_F(VerbSequenceTest, SeededSequencesKeepTheGuest) {
  SequenceRunner runner = Runner();
  std::vector<std::pair<uint64_t, Sequence>> seqs;
  const uint64_t seed = EnvNumber("QLAUNCH_SEQ_SEED", 34);
  if (const char* steps = std::getenv("QLAUNCH_SEQ_STEPS"); steps && *steps) {
    std::string error;
    std::optional<Sequence> given = ParseSequence(steps, &error);
    ASSERT_TRUE(given.has_value()) << "QLAUNCH_SEQ_STEPS: " << error;
    ASSERT_TRUE(Modelled(*given)) << "QLAUNCH_SEQ_STEPS unplugs from a paused guest, which the model does not know";
    seqs.emplace_back(seed, Normalized(*given));
  } else {
    const uint64_t count = EnvNumber("QLAUNCH_SEQ_COUNT", 3), max_len = EnvNumber("QLAUNCH_SEQ_MAX_LEN", 5);
    Say("seed " + std::to_string(seed) + ", " + std::to_string(count) + " sequences of up to " +
        std::to_string(max_len) + " steps");
    for (uint64_t i = 0; i < count; ++i) seqs.emplace_back(SequenceSeed(seed, i), Generate(SequenceSeed(seed, i), max_len));
  }
  const json summary = RunAll(runner, seqs);
  EXPECT_GT(summary["sequences"].get<int>(), 0) << "no sequence ran within the budget";
}

}  // namespace
}  // namespace qlaunch::testing
