#include "launcher/host/qemu_user.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

// nobody:nogroup, as --user would resolve it; these tests run as root, like the suite.
QemuUser Nobody() {
  QemuUser u;
  u.user = u.group = "nobody";
  u.uid = 65534;
  u.gid = 65534;
  u.groups = {65534};
  u.change = true;
  return u;
}

class OpenErrorAsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "the suite runs as root";
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  }

  fs::path File(const std::string& name, mode_t mode) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "x";
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    return p;
  }

  testing::TempDir tmp_{"qlaunch-openas"};
  const fs::path dir_ = tmp_.path;
};

TEST_F(OpenErrorAsTest, AnswersAsTheUserWouldFindIt) {
  const QemuUser nobody = Nobody();
  const fs::path mine = File("root-only", 0600), readable = File("readable", 0644);
  EXPECT_EQ(OpenErrorAs(nobody, mine, O_RDONLY), EACCES);
  EXPECT_EQ(OpenErrorAs(nobody, readable, O_RDONLY), 0);
  EXPECT_EQ(OpenErrorAs(nobody, readable, O_RDWR), EACCES);
  EXPECT_EQ(OpenErrorAs(nobody, dir_ / "missing", O_RDONLY), ENOENT);
  // A directory on the path it may not search.
  fs::create_directory(dir_ / "closed");
  std::ofstream(dir_ / "closed" / "f") << "x";
  ASSERT_EQ(::chmod((dir_ / "closed" / "f").c_str(), 0666), 0);
  ASSERT_EQ(::chmod((dir_ / "closed").c_str(), 0700), 0);
  EXPECT_EQ(OpenErrorAs(nobody, dir_ / "closed" / "f", O_RDWR), EACCES);
  // Its groups count: the file's group is one of them.
  ASSERT_EQ(::chown(mine.c_str(), 0, 65534), 0);
  ASSERT_EQ(::chmod(mine.c_str(), 0660), 0);
  EXPECT_EQ(OpenErrorAs(nobody, mine, O_RDWR), 0);
  // Without a change of user, qlaunch's own (root's) view.
  QemuUser self = nobody;
  self.change = false;
  EXPECT_EQ(OpenErrorAs(self, dir_ / "closed" / "f", O_RDWR), 0);
}

TEST_F(OpenErrorAsTest, QlaunchKeepsItsOwnCredentialsDumpableFlagAndSignalMask) {
  std::vector<gid_t> groups_before(::getgroups(0, nullptr));
  ::getgroups(static_cast<int>(groups_before.size()), groups_before.data());
  ASSERT_EQ(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
  sigset_t before, after;
  sigemptyset(&before);
  sigaddset(&before, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &before, nullptr), 0);

  EXPECT_EQ(OpenErrorAs(Nobody(), File("f", 0600), O_RDONLY), EACCES);

  uid_t r, e, s;
  ASSERT_EQ(::getresuid(&r, &e, &s), 0);
  EXPECT_EQ(r, 0u);
  EXPECT_EQ(e, 0u);
  EXPECT_EQ(s, 0u);
  gid_t gr, ge, gs;
  ASSERT_EQ(::getresgid(&gr, &ge, &gs), 0);
  EXPECT_EQ(ge, 0u);
  std::vector<gid_t> groups_after(::getgroups(0, nullptr));
  ::getgroups(static_cast<int>(groups_after.size()), groups_after.data());
  EXPECT_EQ(groups_after, groups_before);
  // The user switch in the child (which shares our memory) marks the memory not dumpable; it is put back.
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &after), 0);
  EXPECT_EQ(sigismember(&after, SIGUSR1), 1);
  EXPECT_EQ(sigismember(&after, SIGTERM), 0);
  sigemptyset(&before);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

}  // namespace
}  // namespace qlaunch::launcher
