#include "launcher/bench/bench_accounting.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

double Get(const Phases& p, const std::string& key) {
  for (const auto& [k, v] : p)
    if (k == key) return v;
  ADD_FAILURE() << "no " << key;
  return -1;
}

std::vector<std::string> Keys(const Phases& p) {
  std::vector<std::string> out;
  for (const auto& [k, v] : p) out.push_back(k);
  return out;
}

constexpr int64_t kMs = 1000000;

// start said: startup (its estimate) 2, cli 1, spawn 5, hand_over 2 = total 10 from exec; running at 8.
// The bench forked at 1000 ms, start's entry was at 1003 ms (startup really 3 ms), its last mark at
// 1011 ms, the exit seen at 1015 ms.
TEST(BenchAccounting, StartupAndExitFromOutsideAndEveryMillisecondInAPhase) {
  const Phases in = {{"startup", 2}, {"cli", 1}, {"spawn", 5}, {"hand_over", 2},
                     {"total", 10},  {"unaccounted", 0}, {"running", 8}, {"populated", 6}};
  const Phases out = AccountFromOutside(in, 1003 * kMs, 1011 * kMs, 1000 * kMs, 1015 * kMs);
  EXPECT_EQ(Keys(out), (std::vector<std::string>{"startup", "cli", "spawn", "hand_over", "exit", "total",
                                                 "unaccounted", "running", "populated"}));
  EXPECT_DOUBLE_EQ(Get(out, "startup"), 3.0);
  EXPECT_DOUBLE_EQ(Get(out, "exit"), 4.0);
  EXPECT_DOUBLE_EQ(Get(out, "total"), 15.0);
  EXPECT_DOUBLE_EQ(Get(out, "running"), 9.0);  // 8 from exec by start's estimate; the outside one is 1 ms longer
  EXPECT_DOUBLE_EQ(Get(out, "populated"), 7.0);
  // 3 + 1 + 5 + 2 + 4 = 15: nothing unaccounted.
  EXPECT_NEAR(Get(out, "unaccounted"), 0.0, 1e-9);
}

TEST(BenchAccounting, AGapBetweenPhasesShowsAsUnaccounted) {
  // Entry to the last mark is 8 ms, but the phases hold only 6 of them.
  const Phases in = {{"startup", 1}, {"cli", 1}, {"spawn", 5}, {"total", 7}, {"unaccounted", 0}};
  const Phases out = AccountFromOutside(in, 2 * kMs, 10 * kMs, 0, 11 * kMs);
  EXPECT_DOUBLE_EQ(Get(out, "total"), 11.0);
  EXPECT_NEAR(Get(out, "unaccounted"), 11.0 - (2 + 1 + 5 + 1), 1e-9);
}

TEST(BenchAccounting, AnOlderStartWithoutStartupGetsOne) {
  const Phases in = {{"parse", 1}, {"total", 1}, {"running", 0}};
  const Phases out = AccountFromOutside(in, 5 * kMs, 6 * kMs, 0, 9 * kMs);
  EXPECT_EQ(Keys(out), (std::vector<std::string>{"startup", "parse", "exit", "total", "running", "unaccounted"}));
  EXPECT_DOUBLE_EQ(Get(out, "startup"), 5.0);
  EXPECT_DOUBLE_EQ(Get(out, "running"), 0.0) << "a moment not reached stays 0";
  EXPECT_NEAR(Get(out, "unaccounted"), 0.0, 1e-9);
}

TEST(BenchAccounting, ClocksOutOfOrderAreRefused) {
  const Phases in = {{"total", 1}};
  EXPECT_THROW(AccountFromOutside(in, 5, 6, 7, 9), std::invalid_argument);  // entry before the fork
  EXPECT_THROW(AccountFromOutside(in, 5, 10, 0, 9), std::invalid_argument);  // last mark after the exit
}

}  // namespace
}  // namespace qlaunch::launcher
