#include "launcher/lifecycle/timings.h"

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
  r.timings.Add(Phase::kSpawn, std::chrono::microseconds(1500));
  r.timings.Finish();
  nlohmann::json j = ToJson(r);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 7u) << j.dump();
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
    EXPECT_GE(it.value().get<double>(), 0.0) << it.key();
  }
  std::vector<std::string> want = {"cont",  "parse",   "plan",    "populated", "prealloc", "preflight",
                                   "probe", "qmp_ready", "running", "spawn",  "topology", "total"};  // sorted
  EXPECT_EQ(keys, want);
  EXPECT_DOUBLE_EQ(t["spawn"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(t["qmp_ready"].get<double>(), 0.0);
}

TEST(Timings, MomentsAreTimesSinceTheStart) {
  StartReport r;
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  r.timings.Reached(Timings::Moment::kRunning);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  r.timings.Reached(Timings::Moment::kPopulated);
  r.timings.Finish();
  const double running = r.timings.Ms(Timings::Moment::kRunning);
  const double populated = r.timings.Ms(Timings::Moment::kPopulated);
  EXPECT_GE(running, 10.0);
  EXPECT_GE(populated, running + 10.0);
  EXPECT_LE(populated, r.timings.Ms(Phase::kTotal));
  nlohmann::json t = ToJson(r)["timings_ms"];
  EXPECT_NEAR(t["running"].get<double>(), running, 0.001);
  EXPECT_NEAR(t["populated"].get<double>(), populated, 0.001);
  r.run_early = true;
  EXPECT_NE(ToTable(r).find("(--run-early)"), std::string::npos) << ToTable(r);
}

TEST(Timings, MarksAreConsecutiveAndAddUpToTotal) {
  Timings t;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.Mark(Phase::kParse);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  t.Mark(Phase::kProbe);
  t.Finish();
  EXPECT_GE(t.Ms(Phase::kParse), 20.0);
  EXPECT_GE(t.Ms(Phase::kProbe), 10.0);
  double sum = t.Ms(Phase::kParse) + t.Ms(Phase::kProbe);
  EXPECT_LE(sum, t.Ms(Phase::kTotal));
  EXPECT_LT(t.Ms(Phase::kTotal) - sum, 5.0);
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
  EXPECT_NE(table.find("cont              3.0"), std::string::npos) << table;
}

}  // namespace
}  // namespace qlaunch::launcher
