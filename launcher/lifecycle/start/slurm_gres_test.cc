#include "launcher/lifecycle/start/slurm_gres.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t k2M = 2ull << 20;
constexpr uint64_t k1G = 1ull << 30;

TEST(GresType, TheLargestUnitThatDividesThePageSize) {
  EXPECT_EQ(GresType(k2M), "2M");
  EXPECT_EQ(GresType(k1G), "1G");
  EXPECT_EQ(GresType(64 << 10), "64K");
  EXPECT_EQ(GresType(16ull << 30), "16G");
  EXPECT_EQ(GresType(512ull << 20), "512M");
}

TEST(GresArgument, PagesSummedPerSizeSizesAscending) {
  EXPECT_EQ(GresArgument({{0, k2M, 1024}, {1, k2M, 2048}, {-1, k1G, 4}, {0, 0, 99}}),
            "hugepages:2M:3072,hugepages:1G:4");
  EXPECT_EQ(GresArgument({{0, 0, 99}}), "");
  EXPECT_EQ(GresArgument({}), "");
}

numa::HostNode NodeOf(unsigned id, IdSet cpus, std::map<uint64_t, numa::HugePool> pools) {
  numa::HostNode n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.hugepages = std::move(pools);
  return n;
}

TEST(HostGresConfig, OneNodeOneLinePerSizeWithPages) {
  numa::HostTopology host;
  host.nodes.push_back(NodeOf(0, IdSet{0, 1}, {{k2M, {4608, 100}}, {k1G, {0, 0}}}));
  GresConfig c = HostGresConfig(host, "vmhost");
  EXPECT_EQ(c.gres_types, "GresTypes=hugepages");
  EXPECT_EQ(c.node_gres, "NodeName=vmhost Gres=hugepages:2M:4608");
  EXPECT_EQ(c.gres_conf, std::vector<std::string>{"NodeName=vmhost Name=hugepages Type=2M Count=4608"});
  std::string text = FormatGresConfig(c, "vmhost");
  EXPECT_NE(text.find("in pages of the type's size"), std::string::npos) << text;
  EXPECT_NE(text.find("\nGresTypes=hugepages\nNodeName=vmhost Gres=hugepages:2M:4608\n"), std::string::npos) << text;
}

TEST(HostGresConfig, NoPagesNoGres) {
  numa::HostTopology host;
  host.nodes.push_back(NodeOf(0, IdSet{0}, {{k2M, {0, 0}}}));
  EXPECT_TRUE(HostGresConfig(host, "h").empty());
  EXPECT_EQ(HostGresConfig(host, "h").node_gres, "");
}

// Two sockets, two cores each, two threads per core: OS CPUs 0-3 are socket 0 (0,1 one core;
// 2,3 the other), 4-7 socket 1. Node 1 is socket 1; a CPU-less node 2 goes with its nearest.
TEST(HostGresConfig, SeveralNodesOneLineEachWithSlurmLogicalCores) {
  testing::TempDir tmp;
  for (unsigned cpu = 0; cpu < 8; ++cpu) {
    fs::path dir = tmp.path / "devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "topology";
    fs::create_directories(dir);
    std::ofstream(dir / "physical_package_id") << cpu / 4 << "\n";
    std::ofstream(dir / "core_id") << (cpu % 4) / 2 << "\n";
  }
  numa::HostTopology host;
  host.root = tmp.path;
  host.online_cpus = IdSet{0, 1, 2, 3, 4, 5, 6, 7};
  host.nodes.push_back(NodeOf(0, IdSet{0, 1, 2, 3}, {{k2M, {1000, 1000}}, {k1G, {2, 2}}}));
  host.nodes.push_back(NodeOf(1, IdSet{4, 5, 6, 7}, {{k2M, {500, 500}}}));
  numa::HostNode cpuless = NodeOf(2, IdSet{}, {{k2M, {24, 24}}});
  cpuless.distances = {{0, 30}, {1, 20}, {2, 10}};
  host.nodes.push_back(cpuless);
  host.nodes[0].distances = {{0, 10}, {1, 20}, {2, 30}};
  host.nodes[1].distances = {{0, 20}, {1, 10}, {2, 20}};
  EXPECT_EQ(LogicalCores(host, IdSet{4, 5, 6, 7}).ToString(), "2-3");
  GresConfig c = HostGresConfig(host, "big");
  EXPECT_EQ(c.node_gres, "NodeName=big Gres=hugepages:2M:1524,hugepages:1G:2");
  EXPECT_EQ(c.gres_conf, (std::vector<std::string>{
                             "NodeName=big Name=hugepages Type=2M Count=1000 Cores=0-1  # host node 0",
                             "NodeName=big Name=hugepages Type=2M Count=500 Cores=2-3  # host node 1",
                             "NodeName=big Name=hugepages Type=2M Count=24 Cores=2-3  # host node 2",
                             "NodeName=big Name=hugepages Type=1G Count=2",
                         }));
}

TEST(LogicalCores, UnreadableTopologyGivesNothing) {
  numa::HostTopology host;
  host.root = "/nonexistent";
  host.online_cpus = IdSet{0, 1};
  EXPECT_TRUE(LogicalCores(host, IdSet{0}).Empty());
}

}  // namespace
}  // namespace qlaunch::launcher
