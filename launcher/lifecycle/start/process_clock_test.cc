#include "launcher/lifecycle/start/process_clock.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

TEST(ProcessClock, StartupIsRunOrCpuTimeWhicheverIsLaterPlusWait) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(StartupFromSchedstat("7493168 4545918 4\n", nanoseconds(7000000)), nanoseconds(7493168 + 4545918));
  EXPECT_EQ(StartupFromSchedstat("10 20 1", nanoseconds(0)), nanoseconds(30));
  // schedstat's run not brought up to date since the fork: the CPU clock stands in for it.
  EXPECT_EQ(StartupFromSchedstat("0 0 0\n", nanoseconds(1200000)), nanoseconds(1200000));
  EXPECT_EQ(StartupFromSchedstat("0 3000 1\n", nanoseconds(1200000)), nanoseconds(1203000));
  // Not schedstat's text (or no file): the CPU time alone.
  EXPECT_EQ(StartupFromSchedstat("", nanoseconds(5)), nanoseconds(5));
  EXPECT_EQ(StartupFromSchedstat("garbage", nanoseconds(5)), nanoseconds(5));
  EXPECT_EQ(StartupFromSchedstat("10", nanoseconds(5)), nanoseconds(5));
  EXPECT_EQ(StartupFromSchedstat("10 x 1", nanoseconds(5)), nanoseconds(5));
}

// The constructor ran before main: the entry lies in the past, it does not move, and the start-up
// before it (this test binary's loading) is some positive time, well under a minute.
TEST(ProcessClock, EntryIsBeforeMainAndFixed) {
  const auto entry = ProcessClock::Entry();
  EXPECT_LT(entry, ProcessClock::Clock::now());
  EXPECT_EQ(ProcessClock::Entry(), entry);
  EXPECT_EQ(ProcessClock::EntryNs(),
            std::chrono::duration_cast<std::chrono::nanoseconds>(entry.time_since_epoch()).count());
  EXPECT_GT(ProcessClock::StartupEstimate().count(), 0);
  EXPECT_LT(ProcessClock::StartupEstimate(), std::chrono::minutes(1));
}

}  // namespace
}  // namespace qlaunch::launcher
