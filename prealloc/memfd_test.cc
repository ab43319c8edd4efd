#include "prealloc/memfd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "prealloc/error.h"
#include "prealloc/test_util.h"

namespace qlaunch::prealloc {
namespace {

using testing::kMiB;

TEST(Memfd, CreatesSizedCloexecFile) {
  Memfd m = Memfd::Create("qlaunch-test", 8 * kMiB, 4096);
  ASSERT_TRUE(m.valid());
  EXPECT_FALSE(m.hugetlb());
  struct stat st {};
  ASSERT_EQ(fstat(m.fd(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 8 * kMiB);
  EXPECT_EQ(st.st_blocks, 0) << "no page is allocated before populating";
  EXPECT_TRUE(fcntl(m.fd(), F_GETFD) & FD_CLOEXEC);
  std::string link = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(m.fd()));
  EXPECT_NE(link.find("memfd:qlaunch-test"), std::string::npos) << link;
}

TEST(Memfd, ZeroPageSizeMeansOrdinaryPages) {
  Memfd m = Memfd::Create("ordinary", 4096, 0);
  EXPECT_EQ(m.page_bytes(), BasePageBytes());
  EXPECT_FALSE(m.hugetlb());
}

TEST(Memfd, SizeMustBeAPageMultiple) {
  try {
    Memfd::Create("odd", 3 * kMiB, 2 * kMiB);
    FAIL() << "no error";
  } catch (const PreallocError& e) {
    EXPECT_NE(std::string(e.what()).find("not a positive multiple of the 2 MiB page size"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Memfd::Create("empty", 0, 4096), PreallocError);
  EXPECT_THROW(Memfd::Create("npot", 3 * 3000, 3000), PreallocError);
}

TEST(Memfd, HugetlbFileNeedsNoPoolUntilMapped) {
  if (!FreeHugepages(testing::k2M)) GTEST_SKIP() << "no 2 MiB hugepage support";
  Memfd m = Memfd::Create("huge", 64 * kMiB, testing::k2M);
  EXPECT_TRUE(m.hugetlb());
  struct stat st {};
  ASSERT_EQ(fstat(m.fd(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 64 * kMiB);
  EXPECT_EQ(static_cast<uint64_t>(st.st_blksize), testing::k2M) << "a hugetlbfs file";
}

TEST(Memfd, UnsupportedHugePageSizeIsNamed) {
  // 64 KiB is not a hugetlb size on x86-64 (nor on most other hosts).
  if (std::filesystem::exists(HugepagePoolDir(64 * 1024))) GTEST_SKIP() << "this host has 64 KiB hugepages";
  try {
    Memfd::Create("bad", 64 * kMiB, 64 * 1024);
    FAIL() << "no error";
  } catch (const PreallocError& e) {
    EXPECT_NE(std::string(e.what()).find("no hugetlbfs support for 64 KiB pages"), std::string::npos)
        << e.what();
  }
}

TEST(Memfd, MoveAndRelease) {
  const size_t fds = testing::CountOpenFds();
  Memfd a = Memfd::Create("a", 4096, 4096);
  int fd = a.fd();
  Memfd b = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(b.fd(), fd);
  int raw = b.release();
  EXPECT_EQ(raw, fd);
  EXPECT_FALSE(b.valid());
  EXPECT_EQ(testing::CountOpenFds(), fds + 1) << "release() leaves the fd open";
  close(raw);
  { Memfd c = Memfd::Create("c", 4096, 4096); }
  EXPECT_EQ(testing::CountOpenFds(), fds);
}

}  // namespace
}  // namespace qlaunch::prealloc
