// StartInterrupt nested (restore holds one across StartDomain, which takes its own): a real
// SIGINT raised in this process under the inner one is recorded for both, runs both's actions,
// is not cleared by the inner one's start, and the process's own handler comes back only when the
// outermost one ends.
#include "launcher/lifecycle/start/start_interrupt.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

using std::chrono::milliseconds;

bool WaitFor(const std::atomic<int>& v, int want) {
  for (int i = 0; i < 500 && v.load() != want; ++i) std::this_thread::sleep_for(milliseconds(2));
  return v.load() == want;
}

std::atomic<int> g_own_handler_calls{0};
void OwnHandler(int) { ++g_own_handler_calls; }

// Installs OwnHandler for SIGINT while alive (what was there before comes back after).
struct OwnSigint {
  struct sigaction old {};
  OwnSigint() {
    struct sigaction sa {};
    sa.sa_handler = OwnHandler;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old);
  }
  ~OwnSigint() { ::sigaction(SIGINT, &old, nullptr); }
};

TEST(StartInterruptTest, ASignalUnderTheInnerOneIsTheOuterOnesToo) {
  OwnSigint own;
  g_own_handler_calls = 0;
  std::atomic<int> outer_fired{0}, inner_fired{0};
  {
    StartInterrupt outer;
    outer.OnInterrupt([&] { outer_fired = 1; });
    {
      StartInterrupt inner;
      inner.OnInterrupt([&] { inner_fired = 1; });
      ASSERT_EQ(inner.signal(), 0);
      ASSERT_EQ(::raise(SIGINT), 0);
      EXPECT_TRUE(WaitFor(inner_fired, 1)) << "the inner one's action did not run";
      EXPECT_EQ(inner.signal(), SIGINT);
      EXPECT_THROW(inner.ThrowIfInterrupted(), std::runtime_error);
    }
    // The inner one is gone: the signal still counts, and the outer one's actions ran.
    EXPECT_EQ(outer.signal(), SIGINT);
    EXPECT_TRUE(WaitFor(outer_fired, 1)) << "the outer one's action did not run";
    {
      // A later inner one (another step under the same outer) sees it at once, not cleared.
      std::atomic<int> late_fired{0};
      StartInterrupt late;
      late.OnInterrupt([&] { late_fired = 1; });
      EXPECT_EQ(late.signal(), SIGINT);
      EXPECT_TRUE(WaitFor(late_fired, 1));
    }
    // Still under the outer one: a second SIGINT does not reach the process's own handler.
    ASSERT_EQ(::raise(SIGINT), 0);
    EXPECT_EQ(g_own_handler_calls.load(), 0);
  }
  // Both gone: the process's own handler is back.
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(g_own_handler_calls.load(), 1);
}

TEST(StartInterruptTest, AFreshOutermostOneStartsWithoutTheLastSignal) {
  OwnSigint own;
  {
    StartInterrupt first;
    ASSERT_EQ(::raise(SIGTERM), 0);
    EXPECT_EQ(first.signal(), SIGTERM);
  }
  StartInterrupt next;
  EXPECT_EQ(next.signal(), 0);
  EXPECT_NO_THROW(next.ThrowIfInterrupted());
}

}  // namespace
}  // namespace qlaunch::launcher
