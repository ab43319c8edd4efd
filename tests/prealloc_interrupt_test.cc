// SIGINT/SIGTERM to `qlaunch prealloc` while it populates, while it holds the memory
// (--hold), and at a range of moments in between: it always ends promptly, and afterwards
// nobody holds its memfds and every hugepage is back in the pool.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/qlaunch_run.h"

namespace qlaunch::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kPages = 1024;  // 2 GiB of 2 MiB pages: long enough to be caught populating

class PreallocInterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DefaultHugepageBytes() != (2u << 20)) GTEST_SKIP() << "these tests assume 2 MiB default hugepages";
    pool_.emplace(HugepagePool::AtLeast(kPages + 8));
    if (!pool_->ok()) GTEST_SKIP() << pool_->error();
    free_before_ = HugepagesFree();
  }

  static std::vector<std::string> Argv(double hold_s) {
    return {QlaunchBinary(), "prealloc", "--size", std::to_string(kPages * 2) + "M", "--page-size", "2M",
            "--nodes", "0", "--hold", std::to_string(hold_s)};
  }

  // Waits (up to 60 s) until the free pool has dropped to `at_most` pages, or the process is gone.
  static bool WaitFreeAtMost(const RunningProcess& p, uint64_t at_most) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline && !PidGone(p.pid())) {
      if (HugepagesFree() <= at_most) return true;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return false;
  }

  void ExpectReleased() {
    EXPECT_EQ(PidsHoldingFd("memfd:qlaunch-prealloc"), std::vector<pid_t>{}) << "memfds still held";
    EXPECT_EQ(HugepagesFree(), free_before_) << "hugepages not returned";
  }

  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
};

TEST_F(PreallocInterruptTest, SignalWhilePopulatingCancelsAndReleases) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    RunningProcess p(Argv(60), {});
    ASSERT_TRUE(WaitFreeAtMost(p, free_before_ - 1)) << "population never started";
    ASSERT_EQ(::kill(p.pid(), sig), 0);
    RunResult r = p.Wait(std::chrono::seconds(30));
    ASSERT_FALSE(r.timed_out);
    if (r.exit_code == 0) {
      // Population finished before the signal landed: then it ended the hold instead.
      EXPECT_NE(r.err.find("hold ended by signal " + std::to_string(sig)), std::string::npos) << r.Describe();
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.Describe();
      EXPECT_NE(r.err.find("qlaunch: error: preallocation cancelled after "), std::string::npos) << r.Describe();
    }
    ExpectReleased();
  }
}

TEST_F(PreallocInterruptTest, SignalDuringHoldReleases) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    RunningProcess p(Argv(60), {});
    ASSERT_TRUE(WaitFreeAtMost(p, free_before_ - kPages)) << "the memory was never fully populated";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // into the hold
    EXPECT_EQ(PidsHoldingFd("memfd:qlaunch-prealloc"), std::vector<pid_t>{p.pid()});
    ASSERT_EQ(::kill(p.pid(), sig), 0);
    RunResult r = p.Wait(std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(r.out.rfind("preallocated ", 0), 0u) << r.Describe();
    EXPECT_NE(r.err.find("hold ended by signal " + std::to_string(sig)), std::string::npos) << r.Describe();
    ExpectReleased();
  }
}

// Whenever the signal lands: killed before the handlers were in place (nothing existed yet),
// cancelled while populating, or the hold ended early. Never anything left. The moments are
// fixed delays after the spawn (start-up) and points of the population as seen from outside
// (the pool's free count), so a slow start (ASan) or a fast fill cannot move all of them out
// of the population window.
TEST_F(PreallocInterruptTest, SignalsAtAnyMomentLeaveNothingBehind) {
  int cancelled = 0, killed = 0, hold_ended = 0;
  struct Moment {
    uint64_t pages_taken;  // once the free pool has dropped by this many pages (0: at the spawn)
    int delay_ms;          // and then this much later
  };
  const std::vector<Moment> moments = {{0, 0},          {0, 20},          {0, 50},              {1, 0},
                                       {kPages / 4, 0}, {kPages / 2, 0},  {kPages * 3 / 4, 0},  {kPages, 50}};
  for (int sig : {SIGINT, SIGTERM}) {
    for (const Moment& m : moments) {
      SCOPED_TRACE(std::string(sig == SIGINT ? "SIGINT" : "SIGTERM") + " " + std::to_string(m.delay_ms) + " ms after " +
                   std::to_string(m.pages_taken) + " pages were taken");
      RunningProcess p(Argv(30), {});
      if (m.pages_taken > 0) {
        ASSERT_TRUE(WaitFreeAtMost(p, free_before_ - m.pages_taken)) << "population never got that far";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(m.delay_ms));
      ASSERT_EQ(::kill(p.pid(), sig), 0);
      RunResult r = p.Wait(std::chrono::seconds(30));
      ASSERT_FALSE(r.timed_out) << "the signal did not end it";
      if (r.exit_code == 1) {
        EXPECT_NE(r.err.find("preallocation cancelled after "), std::string::npos) << r.Describe();
        ++cancelled;
      } else if (r.exit_code == 0) {
        EXPECT_NE(r.err.find("hold ended by signal " + std::to_string(sig)), std::string::npos) << r.Describe();
        ++hold_ended;
      } else {
        EXPECT_EQ(r.signal, sig) << r.Describe();
        ++killed;
      }
      ExpectReleased();
    }
  }
  std::printf("[ signals  ] prealloc: %d cancelled while populating, %d hold ended, %d ended before starting\n",
              cancelled, hold_ended, killed);
  EXPECT_GT(cancelled, 0) << "no signal arrived during population";
  EXPECT_GT(hold_ended, 0) << "no signal arrived during the hold";
}

}  // namespace
}  // namespace qlaunch::testing
