// Model-based tests of verb sequences (issue 34): chains of run-time verbs on one booted guest,
// generated from a seed by walking the domain's states (support/verb_generator.h), each step
// checked against the model (support/sequence_runner.h: the guest counts on with its memory
// unchanged, the live XML agrees with the model and with QEMU, hugepages accounted for, nothing
// leaked). A failing sequence is shrunk to a minimal one, each candidate on a fresh guest, and
// printed with the cause.
//
// Bounded for CI by default: 6 sequences of up to 6 steps from seed 169369, whose 27 steps use
// every verb, refuse some, and chain migrate --local, save and restore; a hot-plugged vCPU and
// migrate; a hot-plugged vCPU, save and restore (the chains of issue 34). About 2 minutes when
// they pass; the failures are shrunk after all have run, until the budget is spent. Under ASan
// (every qlaunch run there costs a few tenths of a second more, and a step makes dozens) the
// first 2 sequences only.
// scripts/soak runs the long form through the same test with:
//   QLAUNCH_SEQ_COUNT    sequences to run (default 6; under ASan 2)
//   QLAUNCH_SEQ_MAX_LEN  steps per sequence at most (default 6; at least half of it)
//   QLAUNCH_SEQ_SEED     the seed of the first sequence; sequence i has seed + i (default 169369)
//   QLAUNCH_SEQ_STEPS    one given sequence instead ("setvcpus 2; attach-disk; save; restore")
//   QLAUNCH_SEQ_BUDGET_S wall time after which no sequence or shrinking run starts (default 150;
//                        under ASan 60; 0: none)
//   QLAUNCH_SEQ_SHRINK_RUNS  candidate runs per failure at most (default 16; 0: no shrinking)
//   QLAUNCH_SEQ_SUMMARY  a file to write the summary to as JSON
//   QLAUNCH_SEQ_DOMAIN   the domain's name (default seq), QLAUNCH_SEQ_POOL_HELD=1 the pool sized and
//                        locked by the caller: workers side by side (scripts/soak)
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kDefaultCount = 2, kDefaultBudgetS = 60;
#else
constexpr uint64_t kDefaultCount = 6, kDefaultBudgetS = 150;
#endif

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

// QLAUNCH_SEQ_POOL_HELD=1 (scripts/soak with workers side by side): the caller holds the pool's
// lock and sized it for every worker; a sequence neither resizes nor locks it.
bool PoolHeld() { return EnvNumber("QLAUNCH_SEQ_POOL_HELD", 0) != 0; }

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
    if (PoolHeld()) {
      if (HugepagesTotal() < kPoolPages)
        FAIL() << "QLAUNCH_SEQ_POOL_HELD: the pool holds " << HugepagesTotal() << " pages, a sequence needs " << kPoolPages;
    } else if (HugepagePool pool = HugepagePool::Exactly(kPoolPages); !pool.ok()) {
      GTEST_SKIP() << pool.error();
    }
    OtherHost("b");  // TearDown clears it too
    fs::create_directories(OtherStateDir("b"));
  }
  SequenceRunner Runner() {
    return SequenceRunner({tmp(), StateDir(), OtherStateDir("b"), tmp() / "cache", boot_});
  }

  HotplugGuest boot_;
};

// One sequence on the test pool, sized and locked for that sequence alone: a soak of hours lets
// the other tests of the machine (who wait for the pool's lock) run between its sequences.
RunReport RunOne(SequenceRunner& runner, const Sequence& seq) {
  if (PoolHeld()) return runner.Run(seq);
  HugepagePool pool = HugepagePool::Exactly(kPoolPages);
  if (!pool.ok()) {
    RunReport r;
    r.steps = seq;
    r.passed = false;
    r.signature = "pool: " + pool.error();
    r.failure = "the hugepage pool of " + std::to_string(kPoolPages) + " pages cannot be made: " + pool.error();
    return r;
  }
  return runner.Run(seq);
}

// Runs `seqs` (seed, sequence) one after the other until the budget is spent, then shrinks each
// failure with what is left of it (every sequence gets its run before any shrinking), and fails
// the test with every minimal sequence; returns the summary.
json RunAll(SequenceRunner& runner, const std::vector<std::pair<uint64_t, Sequence>>& seqs) {
  const uint64_t budget_s = EnvNumber("QLAUNCH_SEQ_BUDGET_S", kDefaultBudgetS);
  const uint64_t shrink_runs = EnvNumber("QLAUNCH_SEQ_SHRINK_RUNS", 16);
  const auto t0 = Clock::now();
  auto over_budget = [&] { return budget_s && Clock::now() - t0 >= std::chrono::seconds(budget_s); };
  json summary = {{"sequences", 0}, {"passed", 0}, {"verbs", json::object()}, {"failures", json::array()}};
  std::vector<std::pair<uint64_t, RunReport>> failed;
  for (const auto& [seed, seq] : seqs) {
    if (over_budget()) {
      Say("budget of " + std::to_string(budget_s) + " s spent: " + std::to_string(summary["sequences"].get<int>()) +
          " of " + std::to_string(seqs.size()) + " sequences ran");
      break;
    }
    Say("seed " + std::to_string(seed) + ": " + SequenceText(seq));
    RunReport r = RunOne(runner, seq);
    summary["sequences"] = summary["sequences"].get<int>() + 1;
    for (const auto& [verb, n] : r.verbs) summary["verbs"][verb] = summary["verbs"].value(verb, 0) + n;
    Say("seed " + std::to_string(seed) + ": " + r.Summary());
    if (r.passed) summary["passed"] = summary["passed"].get<int>() + 1;
    else failed.emplace_back(seed, std::move(r));
  }
  for (const auto& [seed, r] : failed) {
    // Steps after the failing one never ran: shrinking starts from what did. A guest that did
    // not boot has nothing to do with its steps: it is not shrunk.
    Sequence ran = r.steps;
    if (r.failed_at < ran.size()) ran.resize(r.failed_at + 1);
    const bool boot = r.failed_at >= r.steps.size() && r.signature.rfind("boot", 0) == 0;
    RunReport last_failure = r;
    const ShrinkResult s = boot ? ShrinkResult{ran, 0, true} : Shrink(
        ran,
        [&](const Sequence& candidate) {
          const RunReport c = RunOne(runner, candidate);
          Say("  shrinking seed " + std::to_string(seed) + ": " + SequenceText(candidate) + " -> " + c.Summary());
          if (c.signature != r.signature) return false;
          last_failure = c;
          return true;
        },
        shrink_runs, over_budget);
    const std::string minimal = SequenceText(s.minimal);
    Say("seed " + std::to_string(seed) + ": minimal" + (s.complete ? "" : " so far (shrinking stopped)") + " after " +
        std::to_string(s.runs) + " runs: " + minimal);
    summary["failures"].push_back({{"seed", seed},
                                   {"sequence", SequenceText(r.steps)},
                                   {"signature", r.signature},
                                   {"minimal", minimal},
                                   {"minimal_complete", s.complete},
                                   {"cause", last_failure.failure}});
    ADD_FAILURE() << "sequence of seed " << seed << " failed [" << r.signature << "]: " << SequenceText(r.steps)
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
  const uint64_t seed = EnvNumber("QLAUNCH_SEQ_SEED", 169369);
  if (const char* steps = std::getenv("QLAUNCH_SEQ_STEPS"); steps && *steps) {
    std::string error;
    std::optional<Sequence> given = ParseSequence(steps, &error);
    ASSERT_TRUE(given.has_value()) << "QLAUNCH_SEQ_STEPS: " << error;
    ASSERT_TRUE(Modelled(*given)) << "QLAUNCH_SEQ_STEPS unplugs from a paused guest, which the model does not know";
    seqs.emplace_back(seed, Normalized(*given));
  } else {
    const uint64_t count = EnvNumber("QLAUNCH_SEQ_COUNT", kDefaultCount), max_len = EnvNumber("QLAUNCH_SEQ_MAX_LEN", 6);
    Say("seed " + std::to_string(seed) + ", " + std::to_string(count) + " sequences of up to " +
        std::to_string(max_len) + " steps");
    for (uint64_t i = 0; i < count; ++i) seqs.emplace_back(SequenceSeed(seed, i), Generate(SequenceSeed(seed, i), max_len));
  }
  const json summary = RunAll(runner, seqs);
  EXPECT_GT(summary["sequences"].get<int>(), 0) << "no sequence ran within the budget";
}

// The minimal sequences soaks found (scripts/soak), each once broken and fixed: a regression test
// each, run as the soak ran it.
TEST_F(VerbSequenceTest, SequencesSoaksFoundKeepTheGuest) {
  const std::pair<const char*, const char*> found[] = {
      // A DIMM QEMU was started with (restore, migrate --local, a migration's destination) kept
      // its inherited memfd, every page held, after detach-device; and a DIMM attached since under
      // the same id was handed over by migrate --local as that stale memfd (its memory lost).
      {"attach-dimm; save; restore; detach-dimm; attach-dimm; migrate-local",
       "the DIMM's pages back after its detach, the new DIMM's memory handed over"},
      // QEMU 7.2 under TCG aborted at the second plug ("tcg_register_thread: assertion failed"),
      // or died of a corrupted heap at a save after the unplug: the unplug is refused.
      {"setvcpus 2; setvcpus 1; setvcpus 2; save; restore", "no vCPU unplug under TCG"},
  };
  SequenceRunner runner = Runner();
  for (const auto& [steps, what] : found) {
    std::string error;
    const std::optional<Sequence> seq = ParseSequence(steps, &error);
    ASSERT_TRUE(seq.has_value()) << steps << ": " << error;
    const RunReport r = RunOne(runner, Normalized(*seq));
    Say(std::string(steps) + ": " + r.Summary());
    EXPECT_TRUE(r.passed) << steps << " (" << what << "): " << r.failure;
  }
}

}  // namespace
}  // namespace qlaunch::testing
