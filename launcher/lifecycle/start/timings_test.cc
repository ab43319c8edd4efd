#include "launcher/lifecycle/start/timings.h"

#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace qlaunch::launcher {
namespace {

TEST(Timings, JsonHasTheDocumentedShape) {
  StartReport r;
  r.name = "vm1";
  r.pid = 4242;
  r.prealloc = "launcher";
  r.memory_sources = {{"ram-node0", "warm"}, {"ram-node1", "launcher"}};
  r.timings.Add(Phase::kSpawn, std::chrono::microseconds(1500));
  r.timings.Finish();
  nlohmann::json j = ToJson(r);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 9u) << j.dump();
  EXPECT_EQ(j["memory_sources"], (nlohmann::json{{"ram-node0", "warm"}, {"ram-node1", "launcher"}}));
  EXPECT_EQ(j["run_early"], false);
  EXPECT_EQ(j["user"], "");
  EXPECT_EQ(j["notes"], nlohmann::json::array());
  EXPECT_EQ(j["name"], "vm1");
  EXPECT_EQ(j["pid"], 4242);
  EXPECT_EQ(j["prealloc"], "launcher");
  const nlohmann::json& t = j["timings_ms"];
  ASSERT_TRUE(t.is_object());
  std::vector<std::string> keys;
  for (auto it = t.begin(); it != t.end(); ++it) {
    keys.push_back(it.key());
    EXPECT_TRUE(it.value().is_number()) << it.key();
    if (it.key() != "unaccounted") {
      EXPECT_GE(it.value().get<double>(), 0.0) << it.key();
    }
  }
  std::vector<std::string> want = {"cli",      "cont",      "hand_over", "memfd",       "parse",
                                   "plan",     "pool_lock", "populated", "prealloc",    "preflight",
                                   "probe",    "qmp_ready", "return",    "running",     "spawn",
                                   "startup",  "topology",  "total",     "unaccounted", "unmap"};  // sorted
  EXPECT_EQ(keys, want);
  // clock_ns: the entry and the last mark on the monotonic clock, for the bench's outside view.
  EXPECT_EQ(j["clock_ns"]["entry"].get<int64_t>(), r.timings.EntryNs());
  EXPECT_EQ(j["clock_ns"]["end"].get<int64_t>(), r.timings.LastMarkNs());
  EXPECT_LE(r.timings.EntryNs(), r.timings.LastMarkNs());
  EXPECT_DOUBLE_EQ(t["spawn"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(t["qmp_ready"].get<double>(), 0.0);
  EXPECT_NEAR(t["unaccounted"].get<double>(), -1.5, 0.001) << "spawn was added on top of the marks";
}

TEST(Timings, MomentsAreTimesSinceTheStart) {
  StartReport r;
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  r.timings.Reached(Timings::Moment::kRunning);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  r.timings.Reached(Timings::Moment::kPopulated);
  r.timings.Mark(Phase::kHandOver);
  r.timings.Finish();
  const double running = r.timings.Ms(Timings::Moment::kRunning);
  const double populated = r.timings.Ms(Timings::Moment::kPopulated);
  EXPECT_GE(running, 10.0);
  EXPECT_GE(populated, running + 10.0);
  EXPECT_LE(populated, r.timings.Ms(Phase::kTotal));
  nlohmann::json t = ToJson(r)["timings_ms"];
  EXPECT_NEAR(t["running"].get<double>(), running, 0.001);
  // Counted from exec: the process's start-up before its entry is in them.
  EXPECT_GE(running, r.timings.Ms(Phase::kStartup) + 10.0);
  EXPECT_NEAR(t["populated"].get<double>(), populated, 0.001);
  r.run_early = true;
  EXPECT_NE(ToTable(r).find("(--run-early)"), std::string::npos) << ToTable(r);
}

TEST(Timings, MarksAreConsecutiveAndAddUpToTotal) {
  Timings t(Timings::Clock::now(), std::chrono::milliseconds(0));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.Mark(Phase::kParse);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  t.Mark(Phase::kProbe);
  t.Finish();
  EXPECT_GE(t.Ms(Phase::kParse), 20.0);
  EXPECT_GE(t.Ms(Phase::kProbe), 10.0);
  // Total ends at the last mark, so the consecutive marks are all of it: equal up to the rounding
  // of three durations to double milliseconds each (a 1-ulp excess failed "sum <= total" once).
  double sum = t.Ms(Phase::kParse) + t.Ms(Phase::kProbe);
  EXPECT_NEAR(sum, t.Ms(Phase::kTotal), 1e-6);
  EXPECT_NEAR(t.UnaccountedMs(), 0.0, 1e-6);
}

TEST(Timings, TableListsEveryPhaseInOrder) {
  StartReport r;
  r.name = "vm1";
  r.pid = 7;
  r.prealloc = "qemu";
  r.timings.Add(Phase::kCont, std::chrono::milliseconds(3));
  std::string table = ToTable(r);
  EXPECT_NE(table.find("domain vm1 is running (pid 7, preallocation by qemu)"), std::string::npos) << table;
  size_t pos = 0;
  for (size_t i = 0; i < kPhaseCount; ++i) {
    size_t at = table.find(PhaseName(static_cast<Phase>(i)), pos);
    ASSERT_NE(at, std::string::npos) << PhaseName(static_cast<Phase>(i)) << "\n" << table;
    pos = at;
  }
  EXPECT_NE(table.find("cont               3.0"), std::string::npos) << table;
  EXPECT_NE(table.find("unaccounted"), std::string::npos) << table;
}

// Every moment of the process from exec to the last mark is in exactly one phase: startup (given),
// the marks, and nothing else; unaccounted is what is left, zero for consecutive marks.
TEST(Timings, PhasesFromExecAddUpToTotalAndUnaccountedIsTheRest) {
  const auto entry = Timings::Clock::now() - std::chrono::milliseconds(30);
  Timings t(entry, std::chrono::milliseconds(12));
  EXPECT_DOUBLE_EQ(t.Ms(Phase::kStartup), 12.0);
  t.Mark(Phase::kCli);  // the 30 ms since entry, and more
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  t.Mark(Phase::kPreflight);
  t.Mark(Phase::kPoolLock);
  t.Mark(Phase::kPreflight);  // a phase marked twice adds up
  t.Mark(Phase::kHandOver);
  t.Finish();
  EXPECT_GE(t.Ms(Phase::kCli), 30.0);
  EXPECT_GE(t.Ms(Phase::kPreflight), 5.0);
  double sum = 0;
  for (size_t i = 0; i < kPhaseCount; ++i)
    if (static_cast<Phase>(i) != Phase::kTotal) sum += t.Ms(static_cast<Phase>(i));
  EXPECT_NEAR(sum, t.Ms(Phase::kTotal), 1e-6);
  EXPECT_NEAR(t.UnaccountedMs(), 0.0, 1e-6);
  // total is startup + entry to the last mark.
  const double since_entry =
      std::chrono::duration<double, std::milli>(Timings::Clock::time_point(std::chrono::nanoseconds(t.LastMarkNs())) -
                                                entry)
          .count();
  EXPECT_NEAR(t.Ms(Phase::kTotal), 12.0 + since_entry, 1e-3);

  // Time added outside the marks (Add) overlaps them: it shows, negative, as unaccounted.
  t.Add(Phase::kSpawn, std::chrono::milliseconds(4));
  EXPECT_NEAR(t.UnaccountedMs(), -4.0, 1e-6);
  // Time after the last mark is in no phase until the next mark and Finish.
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  t.Mark(Phase::kReturn);
  t.Finish();
  EXPECT_GE(t.Ms(Phase::kReturn), 3.0);
  EXPECT_NEAR(t.UnaccountedMs(), -4.0, 1e-6);
}

// The process's own Timings start at its first initialiser, which ran before main (and before
// this test), with its start-up estimated from /proc/self/schedstat.
TEST(Timings, TheProcessClockStartsBeforeMain) {
  Timings t;
  t.Mark(Phase::kCli);
  t.Finish();
  EXPECT_GT(t.Ms(Phase::kStartup), 0.0) << "no start-up estimate from /proc/self/schedstat";
  EXPECT_GT(t.Ms(Phase::kCli), 0.0);
  EXPECT_NEAR(t.UnaccountedMs(), 0.0, 1e-6);
}

}  // namespace
}  // namespace qlaunch::launcher
