// The HostTopology query helpers, on the fixture hosts and on hand-built topologies.
#include "numa/host_topology.h"

#include <gtest/gtest.h>

#include "numa/test_hosts.h"

namespace qlaunch::numa {
namespace {

using testing::MakeNode;

HostTopology Read(const char* name) { return testing::ReadFixture(name); }

TEST(HostTopology, NodeLookup) {
  HostTopology t = Read("sparse-ids");
  ASSERT_NE(t.Node(5), nullptr);
  EXPECT_EQ(t.Node(5)->id, 5u);
  EXPECT_EQ(t.Node(2)->cpus.ToString(), "4-7");
  EXPECT_EQ(t.Node(1), nullptr);
  EXPECT_EQ(t.Node(3), nullptr);
  EXPECT_EQ(t.Node(6), nullptr);
  EXPECT_EQ(t.NodeIds(), (IdSet{0, 2, 5}));
  EXPECT_EQ(t.CpuNodeIds(), (IdSet{0, 2}));
}

TEST(HostTopology, CpuToNodeMapping) {
  HostTopology t = Read("sparse-ids");
  EXPECT_EQ(t.NodeOfCpu(0), 0u);
  EXPECT_EQ(t.NodeOfCpu(3), 0u);
  EXPECT_EQ(t.NodeOfCpu(4), 2u);
  EXPECT_EQ(t.NodeOfCpu(7), 2u);
  EXPECT_EQ(t.NodeOfCpu(8), std::nullopt);
  EXPECT_EQ(t.NodesOfCpus(IdSet{1, 2}), (IdSet{0}));
  EXPECT_EQ(t.NodesOfCpus(IdSet{3, 4}), (IdSet{0, 2}));
  EXPECT_EQ(t.NodesOfCpus(IdSet{9, 10}), IdSet{});
  EXPECT_EQ(t.CpusOfNodes(IdSet{2}).ToString(), "4-7");
  EXPECT_EQ(t.CpusOfNodes(IdSet{0, 2}).ToString(), "0-7");
  EXPECT_TRUE(t.CpusOfNodes(IdSet{5}).Empty());  // CPU-less
  EXPECT_TRUE(t.CpusOfNodes(IdSet{1}).Empty());  // absent
}

TEST(HostTopology, DistanceFromFilesAndDefaults) {
  HostTopology t = Read("four-node-cpuless");
  EXPECT_EQ(t.Distance(0, 2), 17u);
  EXPECT_EQ(t.Distance(2, 0), 17u);
  EXPECT_EQ(t.Distance(1, 3), 28u);
  EXPECT_EQ(t.Distance(3, 3), 10u);
  EXPECT_EQ(t.Distance(0, 1), 21u);
  EXPECT_EQ(t.Distance(7, 7), 10u);  // unknown node: the defaults
  EXPECT_EQ(t.Distance(0, 7), 20u);

  HostTopology none;
  none.nodes = {MakeNode(0, IdSet{0}), MakeNode(1, IdSet{1})};
  EXPECT_EQ(none.Distance(1, 1), 10u);
  EXPECT_EQ(none.Distance(0, 1), 20u);
}

TEST(HostTopology, NearestCpuNodesOnCpulessFixture) {
  HostTopology t = Read("four-node-cpuless");
  EXPECT_EQ(t.NearestCpuNodes(0), (IdSet{0}));     // has CPUs: itself
  EXPECT_EQ(t.NearestCpuNodes(1), (IdSet{1}));
  EXPECT_EQ(t.NearestCpuNodes(2), (IdSet{0}));     // 17 to node 0, 28 to node 1
  EXPECT_EQ(t.NearestCpuNodes(3), (IdSet{0, 1}));  // 28 to both: a tie keeps both
  EXPECT_EQ(t.NearestCpuNodes(9), IdSet{});        // no such node
}

TEST(HostTopology, NearestCpuNodesOnSparseIds) {
  HostTopology t = Read("sparse-ids");
  EXPECT_EQ(t.NearestCpuNodes(5), (IdSet{2}));  // 28 to node 0, 17 to node 2
  EXPECT_EQ(t.NearestCpuNodes(2), (IdSet{2}));
}

TEST(HostTopology, NearestCpuNodesWithoutDistancesIsEveryCpuNode) {
  HostTopology t;
  t.nodes = {MakeNode(0, IdSet{0, 1}), MakeNode(1), MakeNode(4, IdSet{2, 3}), MakeNode(6)};
  EXPECT_EQ(t.NearestCpuNodes(1), (IdSet{0, 4}));
  EXPECT_EQ(t.NearestCpuNodes(6), (IdSet{0, 4}));
  EXPECT_EQ(t.NearestCpuNodes(4), (IdSet{4}));

  HostTopology memory_only;
  memory_only.nodes = {MakeNode(0), MakeNode(1, {}, {{0, 11}, {1, 10}})};
  EXPECT_EQ(memory_only.NearestCpuNodes(1), IdSet{});  // no node has CPUs at all
}

TEST(HostTopology, NearestCpuNodesIgnoresOtherCpulessNodes) {
  // Node 2 is closest to CPU-less node 3, but only CPU nodes qualify.
  HostTopology t;
  t.nodes = {MakeNode(0, IdSet{0}, {{0, 10}, {1, 20}, {2, 30}, {3, 25}}),
             MakeNode(1, IdSet{1}, {{0, 20}, {1, 10}, {2, 30}, {3, 26}}),
             MakeNode(2, {}, {{0, 30}, {1, 30}, {2, 10}, {3, 12}}),
             MakeNode(3, {}, {{0, 25}, {1, 26}, {2, 12}, {3, 10}})};
  EXPECT_EQ(t.NearestCpuNodes(3), (IdSet{0}));
  EXPECT_EQ(t.NearestCpuNodes(2), (IdSet{0, 1}));
}

}  // namespace
}  // namespace qlaunch::numa
