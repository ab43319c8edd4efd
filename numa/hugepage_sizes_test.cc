#include "numa/hugepage_sizes.h"

#include <gtest/gtest.h>

#include "numa/test_hosts.h"

namespace qlaunch::numa {
namespace {

TEST(HugepageSizes, DirectoryNames) {
  EXPECT_EQ(ParseHugepageDirName("hugepages-2048kB"), 2u << 20);
  EXPECT_EQ(ParseHugepageDirName("hugepages-1048576kB"), 1u << 30);
  EXPECT_EQ(ParseHugepageDirName("hugepages-64kB"), 64u << 10);
  for (const char* bad : {"hugepages-kB", "hugepages-0kB", "hugepages-2048KB", "hugepages-2048", "hugepages-2M",
                          "huge-2048kB", "hugepages--1kB", "nr_hugepages"})
    EXPECT_EQ(ParseHugepageDirName(bad), std::nullopt) << bad;
}

TEST(HugepageSizes, SizesInDirectory) {
  EXPECT_EQ(HugepageSizesIn(testing::FixtureHost("two-node") / "kernel/mm/hugepages"),
            (std::vector<uint64_t>{2u << 20, 1u << 30}));
  EXPECT_TRUE(HugepageSizesIn(testing::FixtureHost("two-node") / "no/such/dir").empty());
}

TEST(HugepageSizes, ProcMeminfoHugepagesize) {
  const char* meminfo =
      "MemTotal:       24683656 kB\n"
      "HugePages_Total:       0\n"
      "Hugepagesize:    1048576 kB\n"
      "Hugetlb:               0 kB\n";
  EXPECT_EQ(ParseMeminfoHugepagesize(meminfo), 1u << 30);
  EXPECT_EQ(ParseMeminfoHugepagesize("MemTotal: 1 kB\nHugepagesize:       2048 kB"), 2u << 20);
  EXPECT_EQ(ParseMeminfoHugepagesize("MemTotal:       24683656 kB\n"), std::nullopt);
  EXPECT_EQ(ParseMeminfoHugepagesize("Hugepagesize:  2048 MB\n"), std::nullopt);
}

TEST(HugepageSizes, DefaultForFixtures) {
  EXPECT_EQ(ReadDefaultHugepageBytes(testing::FixtureHost("sparse-ids"), false, {}), 1u << 30);  // file wins
  EXPECT_EQ(ReadDefaultHugepageBytes(testing::FixtureHost("four-node-cpuless"), false, {2u << 20}), 2u << 20);
  EXPECT_EQ(ReadDefaultHugepageBytes(testing::FixtureHost("four-node-cpuless"), false, {1u << 30}), 0u);
}

}  // namespace
}  // namespace qlaunch::numa
