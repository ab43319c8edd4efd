#include "numa/hugetlbfs_mounts.h"

#include <gtest/gtest.h>

namespace qlaunch::numa {
namespace {

constexpr uint64_t k2M = 2ull << 20;
constexpr uint64_t k1G = 1ull << 30;
using Mounts = std::map<uint64_t, std::string>;

TEST(HugetlbfsMounts, PageSizeOption) {
  EXPECT_EQ(ParsePageSizeOption("2M"), k2M);
  EXPECT_EQ(ParsePageSizeOption("1024M"), k1G);  // how the kernel prints 1 GiB
  EXPECT_EQ(ParsePageSizeOption("1G"), k1G);
  EXPECT_EQ(ParsePageSizeOption("2048K"), k2M);
  EXPECT_EQ(ParsePageSizeOption("2048k"), k2M);
  EXPECT_EQ(ParsePageSizeOption("64K"), 65536u);
  EXPECT_EQ(ParsePageSizeOption("2097152"), k2M);
  for (const char* bad : {"", "M", "2MB", "0", "-2M", "2X", "99999999999999999999"})
    EXPECT_EQ(ParsePageSizeOption(bad), std::nullopt) << bad;
}

TEST(HugetlbfsMounts, PicksHugetlbfsLinesBySize) {
  const char* text =
      "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
      "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n"
      "tmpfs /run tmpfs rw,size=2M 0 0\n"
      "hugetlbfs /dev/hugepages1G hugetlbfs rw,relatime,gid=36,mode=1770,pagesize=1024M,size=4294967296 0 0\n";
  EXPECT_EQ(ParseHugetlbfsMounts(text, k2M), (Mounts{{k2M, "/dev/hugepages"}, {k1G, "/dev/hugepages1G"}}));
}

TEST(HugetlbfsMounts, WithoutPagesizeOptionUsesTheDefaultSize) {
  const char* text = "none /mnt/huge hugetlbfs rw,relatime 0 0\n";
  EXPECT_EQ(ParseHugetlbfsMounts(text, k1G), (Mounts{{k1G, "/mnt/huge"}}));
  EXPECT_EQ(ParseHugetlbfsMounts(text, 0), Mounts{});  // default unknown: size unknown
}

TEST(HugetlbfsMounts, FirstMountOfASizeWins) {
  const char* text =
      "hugetlbfs /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n"
      "hugetlbfs /var/lib/huge hugetlbfs rw,pagesize=2048K 0 0\n";
  EXPECT_EQ(ParseHugetlbfsMounts(text, k2M), (Mounts{{k2M, "/dev/hugepages"}}));
}

TEST(HugetlbfsMounts, UnescapesMountPointsAndSkipsJunk) {
  const char* text =
      "hugetlbfs /mnt/huge\\040pages\\134x hugetlbfs rw,pagesize=2M 0 0\n"
      "garbage\n"
      "\n"
      "hugetlbfs /mnt/bad hugetlbfs rw,pagesize=lots 0 0\n";
  EXPECT_EQ(ParseHugetlbfsMounts(text, k2M), (Mounts{{k2M, "/mnt/huge pages\\x"}}));
}

}  // namespace
}  // namespace qlaunch::numa
