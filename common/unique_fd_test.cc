// UniqueFd closes what it holds exactly once, wherever ownership went.
#include "common/unique_fd.h"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <utility>

namespace qlaunch {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

int OpenNull() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(UniqueFd, ClosesOnDestructionAndNotBefore) {
  int raw;
  {
    UniqueFd fd(OpenNull());
    raw = fd.get();
    EXPECT_TRUE(fd.valid());
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
  EXPECT_FALSE(UniqueFd().valid());
}

TEST(UniqueFd, MovingHandsTheFdOverAndTheSourceClosesNothing) {
  UniqueFd a(OpenNull());
  const int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_EQ(a.get(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(b.get(), raw);
  UniqueFd c(OpenNull());
  const int other = c.get();
  c = std::move(b);  // c's own fd is closed, raw is c's now
  EXPECT_FALSE(IsOpen(other));
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
}

TEST(UniqueFd, ReleaseGivesUpAndResetReplaces) {
  UniqueFd fd(OpenNull());
  const int raw = fd.Release();
  EXPECT_EQ(fd.get(), -1);
  EXPECT_TRUE(IsOpen(raw));  // the caller's now
  fd.Reset(raw);
  fd.Reset(raw);  // the same fd again: not closed
  EXPECT_TRUE(IsOpen(raw));
  fd.Reset();
  EXPECT_FALSE(IsOpen(raw));
}

}  // namespace
}  // namespace qlaunch
