#include "launcher/lifecycle/process_clock.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

TEST(ProcessClock, ParsesSchedstatAsRunPlusWait) {
  EXPECT_EQ(ParseSchedstat("7493168 4545918 4\n"), std::chrono::nanoseconds(7493168 + 4545918));
  EXPECT_EQ(ParseSchedstat("10 20 1"), std::chrono::nanoseconds(30));
  EXPECT_EQ(ParseSchedstat(""), std::chrono::nanoseconds(0));
  EXPECT_EQ(ParseSchedstat("garbage"), std::chrono::nanoseconds(0));
  EXPECT_EQ(ParseSchedstat("10"), std::chrono::nanoseconds(0));
  EXPECT_EQ(ParseSchedstat("10 x 1"), std::chrono::nanoseconds(0));
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
