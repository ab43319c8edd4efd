#include "prealloc/signal_stop.h"

#include <gtest/gtest.h>

namespace qlaunch::prealloc {
namespace {

void Marker(int) {}

TEST(SignalStop, SignalsRaiseTheFlagAndHandlersComeBack) {
  struct sigaction mine {}, old_int {}, old_term {};
  mine.sa_handler = Marker;
  sigemptyset(&mine.sa_mask);
  sigaction(SIGINT, &mine, &old_int);
  sigaction(SIGTERM, &mine, &old_term);
  {
    SignalStop stop;
    EXPECT_FALSE(stop.stopped());
    raise(SIGTERM);
    EXPECT_TRUE(stop.stopped());
    EXPECT_EQ(stop.signal(), SIGTERM);
    EXPECT_THROW(SignalStop second, std::logic_error);
  }
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, Marker);
  sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, Marker);
  {
    SignalStop again;  // a fresh one starts lowered
    EXPECT_FALSE(again.stopped());
    raise(SIGINT);
    EXPECT_EQ(again.signal(), SIGINT);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

}  // namespace
}  // namespace qlaunch::prealloc
