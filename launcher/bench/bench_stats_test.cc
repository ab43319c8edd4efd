#include "launcher/bench/bench_stats.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace qlaunch::launcher {
namespace {

TEST(BenchStats, MedianOfOddAndEvenCounts) {
  struct Case {
    std::vector<double> values;
    double median;
  };
  const Case cases[] = {
      {{5}, 5},
      {{3, 1, 2}, 2},
      {{4, 1, 3, 2}, 2.5},
      {{10, 10, 1}, 10},
      {{7.5, 2.5}, 5},
      {{9, 1, 8, 2, 7}, 7},
      {{1, 100, 1000, 2}, 51},
  };
  for (const Case& c : cases) EXPECT_DOUBLE_EQ(Median(c.values), c.median) << ::testing::PrintToString(c.values);
  EXPECT_THROW(Median({}), std::invalid_argument);
}

TEST(BenchStats, SummaryHasRunsMedianMinMax) {
  struct Case {
    std::vector<double> values;
    RunSummary want;
  };
  const Case cases[] = {
      {{42}, {1, 42, 42, 42}},
      {{120, 100, 110}, {3, 110, 100, 120}},
      {{3, 1, 4, 1, 5, 9}, {6, 3.5, 1, 9}},
  };
  for (const Case& c : cases) {
    RunSummary s = Summarize(c.values);
    EXPECT_EQ(s.runs, c.want.runs);
    EXPECT_DOUBLE_EQ(s.median, c.want.median);
    EXPECT_DOUBLE_EQ(s.min, c.want.min);
    EXPECT_DOUBLE_EQ(s.max, c.want.max);
    EXPECT_LE(s.min, s.median);
    EXPECT_LE(s.median, s.max);
  }
  EXPECT_THROW(Summarize({}), std::invalid_argument);
}

TEST(BenchStats, RatioIsTheMedianOfPerRoundRatios) {
  struct Case {
    std::vector<double> x, y;
    std::optional<double> want;
  };
  const Case cases[] = {
      {{}, {}, std::nullopt},
      {{50}, {100}, 0.5},
      // Round 2 is slow for both: its ratio is still 0.5, while the medians alone (100 / 100)
      // would say 1.
      {{50, 500, 100}, {100, 1000, 100}, 0.5},
      {{10, 20, 30, 40}, {10, 10, 10, 10}, 2.5},
      // A round whose other starter took no time is left out rather than dividing by zero.
      {{10, 20}, {0, 10}, 2},
      {{10}, {0}, std::nullopt},
  };
  for (const Case& c : cases) {
    std::optional<double> got = RoundRatioMedian(c.x, c.y);
    ASSERT_EQ(got.has_value(), c.want.has_value()) << ::testing::PrintToString(c.x);
    if (got) {
      EXPECT_DOUBLE_EQ(*got, *c.want) << ::testing::PrintToString(c.x);
    }
  }
  EXPECT_THROW(RoundRatioMedian({1, 2}, {1}), std::invalid_argument);
}

TEST(BenchStats, OrderRotatesByOneEachRound) {
  struct Case {
    size_t count, round;
    std::vector<size_t> want;
  };
  const Case cases[] = {
      {3, 0, {0, 1, 2}}, {3, 1, {1, 2, 0}}, {3, 2, {2, 0, 1}}, {3, 3, {0, 1, 2}}, {3, 7, {1, 2, 0}},
      {2, 0, {0, 1}},    {2, 1, {1, 0}},    {1, 5, {0}},       {0, 3, {}},
  };
  for (const Case& c : cases)
    EXPECT_EQ(RoundOrder(c.count, c.round), c.want) << c.count << " starters, round " << c.round;
  // Over `count` rounds every starter runs first exactly once.
  for (size_t count = 1; count <= 4; ++count) {
    std::vector<int> first(count, 0);
    for (size_t round = 0; round < count; ++round) ++first[RoundOrder(count, round)[0]];
    EXPECT_EQ(first, std::vector<int>(count, 1)) << count;
  }
}

TEST(BenchStats, PhaseMediansKeepTheOrderPhasesFirstAppearIn) {
  struct Case {
    std::vector<Phases> runs;
    Phases want;
  };
  const Case cases[] = {
      {{}, {}},
      {{{{"parse", 1}, {"spawn", 5}, {"total", 10}}}, {{"parse", 1}, {"spawn", 5}, {"total", 10}}},
      {{{{"parse", 1}, {"total", 10}}, {{"parse", 3}, {"total", 30}}, {{"parse", 2}, {"total", 20}}},
       {{"parse", 2}, {"total", 20}}},
      // A phase only newer runs report (a new key in timings_ms) gets the median of those.
      {{{{"parse", 1}, {"total", 10}}, {{"parse", 3}, {"running", 4}, {"total", 12}}},
       {{"parse", 2}, {"total", 11}, {"running", 4}}},
  };
  for (const Case& c : cases) EXPECT_EQ(PhaseMedians(c.runs), c.want);
}

}  // namespace
}  // namespace qlaunch::launcher
