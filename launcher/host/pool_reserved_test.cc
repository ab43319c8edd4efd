#include "launcher/host/pool_reserved.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t k2M = 2ull << 20;
constexpr uint64_t k1G = 1ull << 30;

TEST(ReadReservedHugepages, ReadsEachSizeAndTakesAMissingFileAsNone) {
  testing::TempDir tmp;
  fs::path dir = tmp.path / "kernel/mm/hugepages/hugepages-2048kB";
  fs::create_directories(dir);
  std::ofstream(dir / "resv_hugepages") << "3072\n";
  auto got = ReadReservedHugepages(tmp.path, {k2M, k1G});
  EXPECT_EQ(got, (std::map<uint64_t, uint64_t>{{k2M, 3072}, {k1G, 0}}));
}

TEST(ReadReservedHugepages, TheRealHostAgreesWithMeminfo) {
  std::ifstream meminfo("/proc/meminfo");
  uint64_t rsvd = 0, page_kib = 0;
  for (std::string key; meminfo >> key;) {
    uint64_t v = 0;
    if (key == "HugePages_Rsvd:" && meminfo >> v) rsvd = v;
    else if (key == "Hugepagesize:" && meminfo >> v) page_kib = v;
  }
  ASSERT_NE(page_kib, 0u) << "this kernel has no hugetlb (HugePages_* in /proc/meminfo): qlaunch needs it";
  EXPECT_EQ(ReadReservedHugepages("/sys", {page_kib * 1024}).at(page_kib * 1024), rsvd);
}

numa::HostNode NodeWith(unsigned id, std::map<uint64_t, numa::HugePool> pools) {
  numa::HostNode n;
  n.id = id;
  n.hugepages = std::move(pools);
  return n;
}

TEST(ReservedCountIsExactPerNode, OnlyWhenEveryNeededSizeLivesOnOneNode) {
  numa::HostTopology host;
  host.nodes.push_back(NodeWith(0, {{k2M, {100, 100}}, {k1G, {2, 2}}}));
  host.nodes.push_back(NodeWith(1, {{k2M, {50, 50}}, {k1G, {0, 0}}}));
  EXPECT_EQ(NodesWithPool(host, k2M), 2u);
  EXPECT_EQ(NodesWithPool(host, k1G), 1u);  // node 1 has the size, but no pages of it
  EXPECT_TRUE(ReservedCountIsExactPerNode({{0, k1G, 1}}, host));
  EXPECT_FALSE(ReservedCountIsExactPerNode({{0, k1G, 1}, {0, k2M, 10}}, host));
  EXPECT_FALSE(ReservedCountIsExactPerNode({{-1, k2M, 10}}, host));
  EXPECT_TRUE(ReservedCountIsExactPerNode({}, host));
}

// The free count read with the reserved one replaces the node's where the size's pool sits on
// one node (it was read earlier, with the rest of the topology); two pools keep their own.
TEST(ReadReservedHugepagesConsistently, TakesTheSizesFreeCountReadWithReserved) {
  testing::TempDir tmp;
  for (const char* size : {"hugepages-2048kB", "hugepages-1048576kB"}) {
    fs::path dir = tmp.path / "kernel/mm/hugepages" / size;
    fs::create_directories(dir);
    std::ofstream(dir / "free_hugepages") << (size[10] == '2' ? "70\n" : "1\n");
    std::ofstream(dir / "resv_hugepages") << (size[10] == '2' ? "30\n" : "0\n");
  }
  numa::HostTopology host;
  host.root = tmp.path;
  host.hugepage_sizes = {k2M, k1G};
  host.nodes.push_back(NodeWith(0, {{k2M, {100, 72}}, {k1G, {2, 2}}}));
  host.nodes.push_back(NodeWith(1, {{k2M, {0, 0}}, {k1G, {2, 2}}}));
  auto reserved = ReadReservedHugepagesConsistently(&host);
  EXPECT_EQ(reserved, (std::map<uint64_t, uint64_t>{{k2M, 30}, {k1G, 0}}));
  EXPECT_EQ(host.nodes[0].hugepages.at(k2M).free, 70u);  // one node: the free read with reserved
  EXPECT_EQ(host.nodes[0].hugepages.at(k1G).free, 2u);   // two nodes: each keeps its own count
  EXPECT_EQ(host.nodes[1].hugepages.at(k1G).free, 2u);
  EXPECT_EQ(host.nodes[1].hugepages.at(k2M).free, 0u);
}

}  // namespace
}  // namespace qlaunch::launcher
