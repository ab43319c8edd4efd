// ReadHostTopology on the fixture trees, field by field, and on broken trees.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

#include "numa/host_topology.h"
#include "numa/test_hosts.h"

namespace qlaunch::numa {
namespace {

namespace fs = std::filesystem;
using testing::FixtureHost;
using testing::LibvirtFakeHost;

constexpr uint64_t k2M = 2ull << 20;
constexpr uint64_t k1G = 1ull << 30;
constexpr uint64_t kKiB = 1024;

HostTopology Read(const fs::path& root) { return testing::ReadAt(root); }

std::map<unsigned, unsigned> Row(std::initializer_list<std::pair<const unsigned, unsigned>> r) { return r; }

TEST(SysfsReader, TwoNode) {
  HostTopology t = Read(FixtureHost("two-node"));
  EXPECT_EQ(t.root, FixtureHost("two-node"));
  ASSERT_EQ(t.nodes.size(), 2u);

  const HostNode& n0 = t.nodes[0];
  EXPECT_EQ(n0.id, 0u);
  EXPECT_EQ(n0.cpus, (IdSet{0, 1, 2, 3}));
  EXPECT_EQ(n0.memory_bytes, 16316412 * kKiB);
  EXPECT_EQ(n0.distances, Row({{0, 10}, {1, 21}}));
  ASSERT_EQ(n0.hugepages.size(), 2u);
  EXPECT_EQ(n0.hugepages.at(k2M).total, 1024u);
  EXPECT_EQ(n0.hugepages.at(k2M).free, 1000u);
  EXPECT_EQ(n0.hugepages.at(k1G).total, 4u);
  EXPECT_EQ(n0.hugepages.at(k1G).free, 4u);

  const HostNode& n1 = t.nodes[1];
  EXPECT_EQ(n1.id, 1u);
  EXPECT_EQ(n1.cpus, (IdSet{4, 5, 6, 7}));
  EXPECT_EQ(n1.memory_bytes, 16512344 * kKiB);
  EXPECT_EQ(n1.distances, Row({{0, 21}, {1, 10}}));
  ASSERT_EQ(n1.hugepages.size(), 2u);
  EXPECT_EQ(n1.hugepages.at(k2M).total, 1024u);
  EXPECT_EQ(n1.hugepages.at(k2M).free, 1024u);
  EXPECT_EQ(n1.hugepages.at(k1G).total, 4u);
  EXPECT_EQ(n1.hugepages.at(k1G).free, 2u);

  EXPECT_EQ(t.online_cpus.ToString(), "0-7");
  EXPECT_EQ(t.usable_cpus.ToString(), "0-7");  // fixture: no affinity filter by default
  EXPECT_EQ(t.hugepage_sizes, (std::vector<uint64_t>{k2M, k1G}));
  EXPECT_EQ(t.default_hugepage_bytes, k2M);
  EXPECT_EQ(t.hugetlbfs_mounts, (std::map<uint64_t, std::string>{{k2M, "/dev/hugepages"}, {k1G, "/dev/hugepages1G"}}));
  EXPECT_TRUE(t.warnings.empty());
}

TEST(SysfsReader, FourNodeCpuless) {
  HostTopology t = Read(FixtureHost("four-node-cpuless"));
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[0].cpus.ToString(), "0-3");
  EXPECT_EQ(t.nodes[1].cpus.ToString(), "4-7");
  EXPECT_TRUE(t.nodes[2].cpus.Empty());
  EXPECT_TRUE(t.nodes[3].cpus.Empty());
  EXPECT_FALSE(t.nodes[2].HasCpus());

  EXPECT_EQ(t.nodes[0].memory_bytes, 8155916 * kKiB);
  EXPECT_EQ(t.nodes[1].memory_bytes, 8257536 * kKiB);
  EXPECT_EQ(t.nodes[2].memory_bytes, 33554432 * kKiB);
  EXPECT_EQ(t.nodes[3].memory_bytes, 16777216 * kKiB);

  EXPECT_EQ(t.nodes[0].distances, Row({{0, 10}, {1, 21}, {2, 17}, {3, 28}}));
  EXPECT_EQ(t.nodes[1].distances, Row({{0, 21}, {1, 10}, {2, 28}, {3, 28}}));
  EXPECT_EQ(t.nodes[2].distances, Row({{0, 17}, {1, 28}, {2, 10}, {3, 28}}));
  EXPECT_EQ(t.nodes[3].distances, Row({{0, 28}, {1, 28}, {2, 28}, {3, 10}}));

  const uint64_t totals[] = {512, 512, 2048, 256}, frees[] = {500, 512, 2048, 0};
  for (unsigned i = 0; i < 4; ++i) {
    SCOPED_TRACE("node " + std::to_string(i));
    ASSERT_EQ(t.nodes[i].hugepages.size(), 1u);
    EXPECT_EQ(t.nodes[i].hugepages.at(k2M).total, totals[i]);
    EXPECT_EQ(t.nodes[i].hugepages.at(k2M).free, frees[i]);
  }
  EXPECT_EQ(t.hugepage_sizes, (std::vector<uint64_t>{k2M}));
  EXPECT_EQ(t.default_hugepage_bytes, k2M);  // no fixture file: the 2 MiB fallback
  EXPECT_EQ(t.hugetlbfs_mounts, (std::map<uint64_t, std::string>{{k2M, "/dev/hugepages"}}));
  EXPECT_EQ(t.online_cpus.ToString(), "0-7");
}

TEST(SysfsReader, SparseIds) {
  HostTopology t = Read(FixtureHost("sparse-ids"));
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(t.nodes[0].id, 0u);
  EXPECT_EQ(t.nodes[1].id, 2u);
  EXPECT_EQ(t.nodes[2].id, 5u);
  EXPECT_EQ(t.NodeIds().ToString(), "0,2,5");

  EXPECT_EQ(t.nodes[0].cpus.ToString(), "0-3");
  EXPECT_EQ(t.nodes[1].cpus.ToString(), "4-7");
  EXPECT_TRUE(t.nodes[2].cpus.Empty());
  EXPECT_EQ(t.nodes[2].memory_bytes, 67108864 * kKiB);

  // The distance file lists online nodes in order, so its 2nd/3rd numbers belong to nodes 2 and 5.
  EXPECT_EQ(t.nodes[0].distances, Row({{0, 10}, {2, 21}, {5, 28}}));
  EXPECT_EQ(t.nodes[1].distances, Row({{0, 21}, {2, 10}, {5, 17}}));
  EXPECT_EQ(t.nodes[2].distances, Row({{0, 28}, {2, 17}, {5, 10}}));

  EXPECT_EQ(t.Node(2)->hugepages.at(k2M).total, 256u);
  EXPECT_EQ(t.Node(2)->hugepages.at(k2M).free, 128u);
  EXPECT_EQ(t.Node(2)->hugepages.at(k1G).free, 6u);
  EXPECT_EQ(t.Node(5)->hugepages.at(k2M).total, 0u);
  EXPECT_EQ(t.Node(5)->hugepages.at(k1G).total, 32u);
  EXPECT_EQ(t.Node(0)->hugepages.at(k1G).total, 8u);

  EXPECT_EQ(t.default_hugepage_bytes, k1G);  // from qlaunch-default-hugepagesize
  EXPECT_EQ(t.hugepage_sizes, (std::vector<uint64_t>{k2M, k1G}));
  EXPECT_EQ(t.hugetlbfs_mounts, (std::map<uint64_t, std::string>{{k1G, "/dev/hugepages"}, {k2M, "/dev/hugepages2M"}}));
}

TEST(SysfsReader, SingleNode) {
  HostTopology t = Read(FixtureHost("single-node"));
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].id, 0u);
  EXPECT_EQ(t.nodes[0].cpus, (IdSet{0, 1}));
  EXPECT_EQ(t.nodes[0].memory_bytes, 5596960 * kKiB);
  EXPECT_EQ(t.nodes[0].distances, Row({{0, 10}}));
  EXPECT_EQ(t.nodes[0].hugepages.at(k2M).total, 0u);
  EXPECT_EQ(t.nodes[0].hugepages.at(k1G).total, 0u);
  EXPECT_EQ(t.hugepage_sizes, (std::vector<uint64_t>{k2M, k1G}));
  EXPECT_EQ(t.default_hugepage_bytes, k2M);
  EXPECT_EQ(t.hugetlbfs_mounts, (std::map<uint64_t, std::string>{{k2M, "/dev/hugepages"}}));
  EXPECT_EQ(t.usable_cpus, (IdSet{0, 1}));
}

TEST(SysfsReader, LibvirtFakeHostLeavesMissingFieldsUnknown) {
  // libvirt 9.0's tests/vircaps2xmldata/linux-basic/system: node/online, node/possible,
  // node/nodeN/cpulist and cpuK links, cpu/online, cpu/present and cpu/cpuK/topology/*.
  ASSERT_EQ(qlaunch::testing::LibvirtCorpusProblem(), "");
  HostTopology t = Read(LibvirtFakeHost());
  ASSERT_EQ(t.NodeIds().ToString(), "0-3");
  const char* cpus[] = {"0-3", "4-7", "8-11", "12-15"};
  for (unsigned i = 0; i < 4; ++i) {
    SCOPED_TRACE("node " + std::to_string(i));
    EXPECT_EQ(t.nodes[i].cpus.ToString(), cpus[i]);
    EXPECT_EQ(t.nodes[i].memory_bytes, 0u);
    EXPECT_TRUE(t.nodes[i].distances.empty());
    EXPECT_TRUE(t.nodes[i].hugepages.empty());
  }
  EXPECT_TRUE(t.hugepage_sizes.empty());
  EXPECT_EQ(t.default_hugepage_bytes, 0u);
  EXPECT_TRUE(t.hugetlbfs_mounts.empty());
  EXPECT_EQ(t.online_cpus.ToString(), "0-15");
  EXPECT_EQ(t.usable_cpus.ToString(), "0-15");
  EXPECT_EQ(t.Distance(0, 0), 10u);
  EXPECT_EQ(t.Distance(0, 3), 20u);
}

TEST(SysfsReader, MountsFileOptionOverridesFixtureMounts) {
  ReadOptions opts;
  opts.sysfs_root = FixtureHost("two-node");
  opts.mounts_file = FixtureHost("four-node-cpuless") / "mounts";
  HostTopology t = ReadHostTopology(opts);
  EXPECT_EQ(t.hugetlbfs_mounts, (std::map<uint64_t, std::string>{{k2M, "/dev/hugepages"}}));
}

// A scratch sysfs tree under the test temp dir, removed afterwards.
class ScratchTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("qlaunch-numa-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  // The error message of ReadHostTopology on the scratch tree ("" when it succeeds).
  std::string ReadError() {
    try {
      Read(root_);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
  fs::path root_;
};

TEST_F(ScratchTree, MissingNodeDirectoryNamesThePath) {
  Write("devices/system/cpu/online", "0-1\n");
  std::string error = ReadError();
  EXPECT_NE(error.find((root_ / "devices/system/node").string()), std::string::npos) << error;
  EXPECT_NE(error.find("no NUMA node directory"), std::string::npos) << error;
}

TEST_F(ScratchTree, EmptyNodeDirectoryIsAnError) {
  fs::create_directories(root_ / "devices/system/node");
  std::string error = ReadError();
  EXPECT_NE(error.find("no NUMA nodes"), std::string::npos) << error;
}

TEST_F(ScratchTree, WithoutOnlineFileNodeDirectoriesAreUsed) {
  Write("devices/system/node/node0/cpulist", "0-1\n");
  Write("devices/system/node/node3/cpulist", "\n");
  Write("devices/system/node/node3/distance", "20 10\n");
  Write("devices/system/node/power/uevent", "");  // not a node
  HostTopology t = Read(root_);
  EXPECT_EQ(t.NodeIds(), (IdSet{0, 3}));
  EXPECT_TRUE(t.nodes[1].cpus.Empty());
  EXPECT_EQ(t.nodes[1].distances, Row({{0, 20}, {3, 10}}));
  EXPECT_TRUE(t.nodes[0].distances.empty());
}

TEST_F(ScratchTree, MissingCpulistFallsBackToCpuEntries) {
  Write("devices/system/node/online", "0\n");
  fs::create_directories(root_ / "devices/system/node/node0/cpu2");
  fs::create_directories(root_ / "devices/system/node/node0/cpu5");
  EXPECT_EQ(Read(root_).nodes[0].cpus, (IdSet{2, 5}));
}

TEST_F(ScratchTree, OnlineNodeWithoutDirectoryIsAnError) {
  Write("devices/system/node/online", "0-1\n");
  Write("devices/system/node/node0/cpulist", "0\n");
  std::string error = ReadError();
  EXPECT_NE(error.find((root_ / "devices/system/node/node1").string()), std::string::npos) << error;
}

TEST_F(ScratchTree, DistanceCountMustMatchOnlineNodes) {
  Write("devices/system/node/online", "0-1\n");
  Write("devices/system/node/node0/cpulist", "0\n");
  Write("devices/system/node/node1/cpulist", "1\n");
  Write("devices/system/node/node1/distance", "21 10 30\n");
  std::string error = ReadError();
  EXPECT_NE(error.find((root_ / "devices/system/node/node1/distance").string()), std::string::npos) << error;
  EXPECT_NE(error.find("3 distances for 2 online nodes"), std::string::npos) << error;
}

TEST_F(ScratchTree, MalformedFilesNameTheFile) {
  Write("devices/system/node/online", "0\n");
  Write("devices/system/node/node0/cpulist", "0-x\n");
  EXPECT_NE(ReadError().find("node0/cpulist: not an id list: '0-x'"), std::string::npos) << ReadError();

  Write("devices/system/node/node0/cpulist", "0\n");
  Write("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "lots\n");
  Write("devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "0\n");
  EXPECT_NE(ReadError().find("nr_hugepages: expected an unsigned number, got 'lots'"), std::string::npos)
      << ReadError();

  Write("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "3\n");
  Write("devices/system/node/node0/meminfo", "Node 0 MemFree: 12 kB\n");
  EXPECT_NE(ReadError().find("node0/meminfo: no 'Node 0 MemTotal"), std::string::npos) << ReadError();
}

TEST_F(ScratchTree, PoolNeedsBothCountsAndDefaultSizeFallsBackToNothing) {
  Write("devices/system/node/online", "0\n");
  Write("devices/system/node/node0/cpulist", "0\n");
  Write("devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages", "2\n");  // no free_hugepages
  HostTopology t = Read(root_);
  EXPECT_TRUE(t.nodes[0].hugepages.empty());
  EXPECT_EQ(t.hugepage_sizes, (std::vector<uint64_t>{k1G}));  // the directory still names a size
  EXPECT_EQ(t.default_hugepage_bytes, 0u);                     // no file, and 2 MiB is not supported
}

// The pre-flight's second look: only the pools' counts change, read from the same tree; a pool
// that went away goes, the rest of the topology stays as first read.
TEST_F(ScratchTree, RereadingThePoolsTakesTheCountsNowAndNothingElse) {
  Write("devices/system/node/online", "0-1\n");
  for (const char* n : {"node0", "node1"}) {
    Write(std::string("devices/system/node/") + n + "/cpulist", n[4] == '0' ? "0\n" : "1\n");
    Write(std::string("devices/system/node/") + n + "/hugepages/hugepages-2048kB/nr_hugepages", "8\n");
    Write(std::string("devices/system/node/") + n + "/hugepages/hugepages-2048kB/free_hugepages", "8\n");
  }
  HostTopology t = Read(root_);
  ASSERT_EQ(t.nodes.size(), 2u);
  Write("devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "3\n");
  Write("devices/system/node/node1/cpulist", "1-3\n");  // not re-read
  fs::remove(root_ / "devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages");
  RereadHugepagePools(&t);
  EXPECT_EQ(t.nodes[0].hugepages.at(k2M).total, 8u);
  EXPECT_EQ(t.nodes[0].hugepages.at(k2M).free, 3u);
  EXPECT_TRUE(t.nodes[1].hugepages.empty());
  EXPECT_EQ(t.nodes[1].cpus.ToString(), "1");
}

TEST_F(ScratchTree, AffinityCanBeRequestedForAFixture) {
  Write("devices/system/node/online", "0\n");
  Write("devices/system/node/node0/cpulist", "0-4095\n");
  Write("devices/system/cpu/online", "0-4095\n");
  ReadOptions opts;
  opts.sysfs_root = root_;
  opts.use_affinity = true;
  HostTopology t = ReadHostTopology(opts);
  EXPECT_EQ(t.online_cpus.Size(), 4096u);
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(t.usable_cpus.Size(), static_cast<size_t>(CPU_COUNT(&set)));
  EXPECT_LT(t.usable_cpus.Size(), 4096u);
}

}  // namespace
}  // namespace qlaunch::numa
