// LockExclusive: held until its fd goes, excludes another process, and refuses loudly.
#include "common/file_lock.h"

#include <gtest/gtest.h>

#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace qlaunch {
namespace {

namespace fs = std::filesystem;

class FileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qlaunch-file-lock-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Whether a child process (flock is per open file description, so it opens its own) could take
  // the lock on `path` without waiting.
  static bool OtherProcessCanLock(const fs::path& path, int open_flags) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(path.c_str(), open_flags);
      if (fd < 0) ::_exit(2);
      ::_exit(::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : (errno == EWOULDBLOCK ? 1 : 3));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_NE(WEXITSTATUS(status), 2) << "child could not open " << path;
    EXPECT_NE(WEXITSTATUS(status), 3) << "flock failed otherwise";
    return WEXITSTATUS(status) == 0;
  }

  fs::path dir_;
};

TEST_F(FileLockTest, ADirectoryIsLockedUntilTheFdGoes) {
  {
    UniqueFd lock = LockExclusive(dir_, LockOn::kDirectory, "the test directory");
    ASSERT_TRUE(lock.valid());
    EXPECT_FALSE(OtherProcessCanLock(dir_, O_RDONLY | O_DIRECTORY));
  }
  EXPECT_TRUE(OtherProcessCanLock(dir_, O_RDONLY | O_DIRECTORY));
}

TEST_F(FileLockTest, ALockFileIsCreatedRootOnlyAndLocked) {
  const fs::path file = dir_ / ".lock";
  UniqueFd lock = LockExclusive(file, LockOn::kFile, "the registry");
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_FALSE(OtherProcessCanLock(file, O_RDWR));
  lock.Reset();
  EXPECT_TRUE(OtherProcessCanLock(file, O_RDWR));
}

TEST_F(FileLockTest, AMissingDirectoryIsAnErrorNamingIt) {
  const fs::path missing = dir_ / "gone";
  try {
    LockExclusive(missing, LockOn::kDirectory, "the pool directory");
    FAIL() << "locked a directory that does not exist";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot open the pool directory " + missing.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
  }
}

TEST_F(FileLockTest, ALockFileInAMissingDirectoryIsAnError) {
  EXPECT_THROW(LockExclusive(dir_ / "gone" / ".lock", LockOn::kFile, "the registry"), std::runtime_error);
}

}  // namespace
}  // namespace qlaunch
