// Reading where guest memory sits from /proc/PID/maps + numa_maps text (as the kernel writes it).
#include "launcher/lifecycle/observe/numa_maps.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

const char* kMaps =
    "55d0c0000000-55d0c1000000 rw-p 00000000 00:00 0 \n"
    "7ff59fe00000-7ff5afe00000 rw-p 00000000 00:27 153224                     "
    "/dev/hugepages/qlaunch/two-cells/qemu_back_mem.ram-node1.FeCs7O (deleted)\n"
    "7ff5b7e00000-7ff5c7e00000 rw-s 00000000 00:01 2048                       /memfd:qlaunch:two-cells:ram-node0 (deleted)\n"
    "7ff5d0000000-7ff5d8000000 rw-p 00000000 00:00 0 \n";
const char* kNumaMaps =
    "55d0c0000000 default anon=10 dirty=10 N0=10 kernelpagesize_kB=4\n"
    "7ff59fe00000 bind:1 file=/dev/hugepages/qlaunch/two-cells/qemu_back_mem.ram-node1.FeCs7O\\040(deleted) huge "
    "anon=128 dirty=128 N1=128 kernelpagesize_kB=2048\n"
    "7ff5b7e00000 bind:0 file=/memfd:qlaunch:two-cells:ram-node0\\040(deleted) huge dirty=3 N0=3 kernelpagesize_kB=2048\n"
    "7ff5d0000000 interleave:0-1 anon=16384 dirty=16384 N0=8192 N1=8192 kernelpagesize_kB=4\n";

TEST(NumaMaps, ParsesSizesPathsAndBytesPerNode) {
  std::vector<Mapping> m = ParseNumaMaps(kMaps, kNumaMaps);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1].size, 256u << 20);
  EXPECT_EQ(m[1].page_bytes, 2u << 20);
  EXPECT_EQ(m[1].bytes_by_node, (std::map<unsigned, uint64_t>{{1, 256u << 20}}));
  EXPECT_EQ(m[2].path, "/memfd:qlaunch:two-cells:ram-node0 (deleted)");
  EXPECT_EQ(m[2].bytes_by_node, (std::map<unsigned, uint64_t>{{0, 6u << 20}}));
  EXPECT_EQ(m[3].bytes_by_node, (std::map<unsigned, uint64_t>{{0, 32u << 20}, {1, 32u << 20}}));
}

TEST(NumaMaps, MatchesBackendsByNameThenBySize) {
  std::vector<Mapping> m = ParseNumaMaps(kMaps, kNumaMaps);
  auto got = MatchBackends(m, {{"ram-node0", 256u << 20, 2u << 20, "0"}, {"ram-node1", 256u << 20, 2u << 20, "1"},
                               {"pc.ram", 128u << 20, 0, "0-1"}, {"memdimm0", 1u << 30, 0, ""}});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got["ram-node0"].start, 0x7ff5b7e00000u);  // its memfd, though ram-node1's file has its size too
  EXPECT_EQ(got["ram-node1"].start, 0x7ff59fe00000u);
  EXPECT_EQ(got["pc.ram"].start, 0x7ff5d0000000u);  // the anonymous mapping of its size, page size, policy
  EXPECT_FALSE(got.count("memdimm0"));
}

// QEMU's own memfd backends all map "/memfd:memory-backend-memfd": told apart by their memory
// policy; a mapping of the right size but other page size or nodes (a thread stack) is not taken.
TEST(NumaMaps, QemuMemfdsAreToldApartByPolicyAndPageSize) {
  const char* maps =
      "7f0000000000-7f0000800000 rw-p 00000000 00:00 0 \n"
      "7f1000000000-7f1000800000 rw-s 00000000 00:01 11                         /memfd:memory-backend-memfd (deleted)\n"
      "7f2000000000-7f2000800000 rw-s 00000000 00:01 12                         /memfd:memory-backend-memfd (deleted)\n";
  const char* numa =
      "7f0000000000 default anon=2 dirty=2 N3=2 kernelpagesize_kB=4\n"
      "7f1000000000 bind:3 file=/memfd:memory-backend-memfd\\040(deleted) huge dirty=4 N3=4 kernelpagesize_kB=2048\n"
      "7f2000000000 bind:0 file=/memfd:memory-backend-memfd\\040(deleted) huge dirty=4 N0=4 kernelpagesize_kB=2048\n";
  auto got = MatchBackends(ParseNumaMaps(maps, numa), {{"ram-node0", 8u << 20, 2u << 20, "0"},
                                                       {"ram-node2", 8u << 20, 2u << 20, "3"}});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got["ram-node0"].bytes_by_node, (std::map<unsigned, uint64_t>{{0, 8u << 20}}));
  EXPECT_EQ(got["ram-node2"].bytes_by_node, (std::map<unsigned, uint64_t>{{3, 8u << 20}}));
}

// A warm pool file QEMU maps but the guest has not touched: numa_maps says "huge" and no page
// size; it is matched by size and policy all the same (the NUMA lab's CPU-less node 2).
TEST(NumaMaps, AnUntouchedHugetlbFileIsMatchedWithoutItsPageSize) {
  const char* maps =
      "7fa0a5800000-7fa0a6000000 rw-s 00000000 00:25 7          /dev/hugepages/qlaunch-pool/use.n2.8388608.a-1-1\n"
      "7fa0a6200000-7fa0a6a00000 rw-s 00000000 00:25 8          /dev/hugepages/qlaunch-pool/use.n0.8388608.a-1-0\n"
      "7fa0b0000000-7fa0b0800000 rw-p 00000000 00:00 0 \n";
  const char* numa =
      "7fa0a5800000 bind:2 file=/dev/hugepages/qlaunch-pool/use.n2.8388608.a-1-1 huge\n"
      "7fa0a6200000 bind:0 file=/dev/hugepages/qlaunch-pool/use.n0.8388608.a-1-0 huge dirty=1 N0=1 kernelpagesize_kB=2048\n"
      "7fa0b0000000 bind:2 anon=1 dirty=1 N2=1 kernelpagesize_kB=4\n";
  std::vector<Mapping> m = ParseNumaMaps(maps, numa);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].page_bytes, 0u);
  EXPECT_EQ(m[1].page_bytes, 2u << 20);
  auto got = MatchBackends(m, {{"ram-node0", 8u << 20, 2u << 20, "0"}, {"ram-node1", 8u << 20, 2u << 20, "2"},
                               {"ram-small", 8u << 20, 0, "2"}});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got["ram-node0"].start, 0x7fa0a6200000u);
  EXPECT_EQ(got["ram-node1"].start, 0x7fa0a5800000u);
  EXPECT_EQ(got["ram-small"].start, 0x7fa0b0000000u) << "ordinary pages never take a hugetlb mapping";
}

}  // namespace
}  // namespace qlaunch::launcher
