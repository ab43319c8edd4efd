// ReadHostTopology on this machine's /sys, checked against what the kernel says through other
// interfaces (sysconf, sched_getaffinity, sched_getcpu, statfs).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "numa/host_topology.h"

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

namespace qlaunch::numa {
namespace {

class RealSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory("/sys/devices/system/node"))
      GTEST_SKIP() << "/sys/devices/system/node absent (kernel without CONFIG_NUMA?)";
    topo_ = ReadHostTopology();
  }
  HostTopology topo_;
};

TEST_F(RealSysfs, NodeZeroExistsWithItsOwnDistance) {
  const HostNode* n0 = topo_.Node(0);
  ASSERT_NE(n0, nullptr);
  EXPECT_EQ(topo_.root, std::filesystem::path("/sys"));
  EXPECT_EQ(n0->distances.at(0), 10u);
  EXPECT_EQ(n0->distances.size(), topo_.nodes.size());
}

TEST_F(RealSysfs, NodeCpusAreTheOnlineCpus) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(online, 0);
  EXPECT_EQ(topo_.online_cpus.Size(), static_cast<size_t>(online));
  EXPECT_EQ(topo_.CpusOfNodes(topo_.NodeIds()).Intersect(topo_.online_cpus), topo_.online_cpus);
  if (topo_.nodes.size() == 1) {
    EXPECT_EQ(topo_.nodes[0].cpus, topo_.online_cpus);
  }
}

TEST_F(RealSysfs, UsableCpusFollowAffinity) {
  ASSERT_FALSE(topo_.usable_cpus.Empty());
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(topo_.usable_cpus.Size(), static_cast<size_t>(CPU_COUNT(&set)));
  const int here = sched_getcpu();
  ASSERT_GE(here, 0);
  EXPECT_TRUE(topo_.usable_cpus.Contains(static_cast<unsigned>(here)))
      << here << " not in " << topo_.usable_cpus.ToString();
  EXPECT_TRUE(topo_.NodeOfCpu(static_cast<unsigned>(here)).has_value());
}

TEST_F(RealSysfs, MemoryIsKnownAndPlausible) {
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  uint64_t sum = 0;
  for (const HostNode& n : topo_.nodes) sum += n.memory_bytes;
  EXPECT_GT(topo_.Node(0)->memory_bytes, 0u);
  EXPECT_LE(sum, physical);
}

TEST_F(RealSysfs, HugepageDefaultIsASupportedSize) {
  if (topo_.hugepage_sizes.empty()) GTEST_SKIP() << "kernel without hugetlb support";
  EXPECT_TRUE(std::is_sorted(topo_.hugepage_sizes.begin(), topo_.hugepage_sizes.end()));
  EXPECT_NE(std::find(topo_.hugepage_sizes.begin(), topo_.hugepage_sizes.end(), topo_.default_hugepage_bytes),
            topo_.hugepage_sizes.end())
      << topo_.default_hugepage_bytes;
  for (const HostNode& n : topo_.nodes)
    for (const auto& [bytes, pool] : n.hugepages) EXPECT_LE(pool.free, pool.total) << "node " << n.id;
}

TEST_F(RealSysfs, HugetlbfsMountsAreHugetlbfsOfThatSize) {
  if (topo_.hugetlbfs_mounts.empty()) GTEST_SKIP() << "no hugetlbfs mounted on this machine";
  for (const auto& [bytes, path] : topo_.hugetlbfs_mounts) {
    struct statfs st {};
    ASSERT_EQ(statfs(path.c_str(), &st), 0) << path;
    EXPECT_EQ(static_cast<unsigned long>(st.f_type), static_cast<unsigned long>(HUGETLBFS_MAGIC)) << path;
    EXPECT_EQ(static_cast<uint64_t>(st.f_bsize), bytes) << path;
  }
}

TEST_F(RealSysfs, TrailingSlashIsStillTheRealSysfs) {
  ReadOptions opts;
  opts.sysfs_root = "/sys/";
  HostTopology t = ReadHostTopology(opts);
  EXPECT_EQ(t.usable_cpus, topo_.usable_cpus);
  EXPECT_EQ(t.default_hugepage_bytes, topo_.default_hugepage_bytes);
}

}  // namespace
}  // namespace qlaunch::numa
