// The owner a domain's file is given back, when two domains on two state roots use it (a migration
// between two roots of one machine, or two hosts on shared storage): the first to take it records
// the original owner on the file, the second finds it there, and only the last to go restores it.
// Runs as root (chown), as every test that gives files to QEMU's user.
#include "launcher/host/file_labels.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

struct Owner {
  uid_t uid;
  gid_t gid;
  mode_t mode;
  bool operator==(const Owner&) const = default;
};

Owner OwnerOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return {st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 07777)};
}

TEST(FileLabels, TheLastDomainOfTwoStateRootsGivesTheOriginalOwnerBack) {
  ASSERT_EQ(::geteuid(), 0u) << "gives files to another user: run as root";
  const passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  QemuUser user;
  user.user = "nobody";
  user.uid = nobody->pw_uid;
  user.gid = nobody->pw_gid;
  user.change = true;

  testing::TempDir tmp;
  fs::permissions(tmp.path, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const fs::path image = tmp.path / "disk.raw";
  std::ofstream(image) << "data";
  fs::permissions(image, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const Owner original = OwnerOf(image);
  const fs::path a = tmp.path / "root-a" / "vm", b = tmp.path / "root-b" / "vm";
  fs::create_directories(a);
  fs::create_directories(b);
  LabelTarget t;
  t.path = image.string();
  t.write = true;

  RelabelForQemu({t}, user, a);  // the source starts
  EXPECT_EQ(OwnerOf(image).uid, user.uid);
  RelabelForQemu({t}, user, b);  // the destination on the other root, the file already QEMU's user's
  EXPECT_EQ(OwnerOf(image).uid, user.uid);
  RestoreLabels(a);  // the source released after the migration: the destination still uses it
  EXPECT_EQ(OwnerOf(image).uid, user.uid) << "given back while the other root's domain uses it";
  RestoreLabels(b);  // the destination destroyed: the owner from before the source
  EXPECT_EQ(OwnerOf(image), original);
  char buf[64];
  EXPECT_LT(::getxattr(image.c_str(), "trusted.qlaunch.owner", buf, sizeof buf), 0) << "the record stays on the file";

  // The other order of release, and a third start after: the same original each time.
  RelabelForQemu({t}, user, a);
  RelabelForQemu({t}, user, b);
  RestoreLabels(b);
  EXPECT_EQ(OwnerOf(image).uid, user.uid);
  RestoreLabels(a);
  EXPECT_EQ(OwnerOf(image), original);
}

}  // namespace
}  // namespace qlaunch::launcher
