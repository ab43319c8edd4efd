// A running QEMU's uid let into a file by an ACL entry, and out again: what the kernel then allows
// a process of that uid (a child switched to it), and the file's mode and ACL once the entries go.
// Runs as root (the child switches uid).
#include "launcher/host/file_acl.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

// The errno of opening `path` with `flags` as `uid` (0 when it opens), in a child process.
int OpenErrorOf(uid_t uid, const std::string& path, int flags) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    int err = 0;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 || ::setresuid(uid, uid, uid) != 0) {
      err = -2;
    } else {
      const int fd = ::open(path.c_str(), flags);
      err = fd < 0 ? errno : 0;
    }
    (void)!::write(pipe_fds[1], &err, sizeof err);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int err = -1;
  (void)!::read(pipe_fds[0], &err, sizeof err);
  ::close(pipe_fds[0]);
  ::waitpid(child, nullptr, 0);
  return err;
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st.st_mode & 07777;
}

TEST(FileAcl, AUserEntryLetsOneUidInAndGoesAgain) {
  ASSERT_EQ(::geteuid(), 0u) << "switches a child to other uids: run as root";
  testing::TempDir tmp;
  ::chmod(tmp.path.c_str(), 0755);
  const std::string file = (tmp.path / "image").string();
  std::ofstream(file) << "data";
  ASSERT_EQ(::chown(file.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  constexpr uid_t kReader = 3700901, kWriter = 3700902, kOther = 3700903;

  struct Step {
    const char* what;
    uid_t uid;
    int flags;
    int want;
  };
  ASSERT_EQ(GrantUserAcl(file, kReader, false), 0) << "this filesystem keeps no ACLs";
  ASSERT_EQ(GrantUserAcl(file, kWriter, true), 0);
  for (const Step& s : {Step{"reader reads", kReader, O_RDONLY, 0}, Step{"reader cannot write", kReader, O_RDWR, EACCES},
                        Step{"writer writes", kWriter, O_RDWR, 0}, Step{"anyone else cannot read", kOther, O_RDONLY, EACCES}})
    EXPECT_EQ(OpenErrorOf(s.uid, file, s.flags), s.want) << s.what;
  EXPECT_EQ(ModeOf(file), 0660u) << "the group bits are the mask: read and write let through";

  RevokeUserAcl(file, kReader, kReader);
  EXPECT_EQ(OpenErrorOf(kReader, file, O_RDONLY), EACCES) << "the reader's entry went";
  EXPECT_EQ(OpenErrorOf(kWriter, file, O_RDWR), 0) << "the writer's stays";
  RevokeUserAcl(file, 3700900, 3700999);
  EXPECT_EQ(OpenErrorOf(kWriter, file, O_RDWR), EACCES);
  EXPECT_LT(::getxattr(file.c_str(), "system.posix_acl_access", nullptr, 0), 0) << "no named entry left: no ACL";
  EXPECT_EQ(ModeOf(file), 0640u) << "the group bits are the owning group's again";
}

}  // namespace
}  // namespace qlaunch::launcher
