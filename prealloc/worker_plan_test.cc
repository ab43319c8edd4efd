#include "prealloc/worker_plan.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace qlaunch::prealloc {
namespace {

// node0: CPUs 0-1, node1: CPUs 2-3, node2: memory only, nearest to node1,
// node3: memory only, equally far from 0 and 1, node4: memory only, no distances.
numa::HostTopology LabHost() {
  numa::HostTopology t;
  auto node = [](unsigned id, IdSet cpus, std::map<unsigned, unsigned> dist) {
    numa::HostNode n;
    n.id = id;
    n.cpus = std::move(cpus);
    n.distances = std::move(dist);
    return n;
  };
  t.nodes.push_back(node(0, {0, 1}, {{0, 10}, {1, 21}, {2, 31}, {3, 25}}));
  t.nodes.push_back(node(1, {2, 3}, {{0, 21}, {1, 10}, {2, 17}, {3, 25}}));
  t.nodes.push_back(node(2, {}, {{0, 31}, {1, 17}, {2, 10}, {3, 30}}));
  t.nodes.push_back(node(3, {}, {{0, 25}, {1, 25}, {2, 30}, {3, 10}}));
  t.nodes.push_back(node(4, {}, {}));
  t.usable_cpus = IdSet{0, 1, 2, 3};
  return t;
}

TEST(WorkerCpus, NodesWithCpusUseTheirOwn) {
  numa::HostTopology t = LabHost();
  EXPECT_EQ(WorkerCpus(t, {0}), (IdSet{0, 1}));
  EXPECT_EQ(WorkerCpus(t, {1}), (IdSet{2, 3}));
  EXPECT_EQ(WorkerCpus(t, {0, 1}), (IdSet{0, 1, 2, 3}));
}

TEST(WorkerCpus, CpuLessNodesUseTheNearestCpuNodes) {
  numa::HostTopology t = LabHost();
  EXPECT_EQ(WorkerCpus(t, {2}), (IdSet{2, 3}));        // nearest: node1
  EXPECT_EQ(WorkerCpus(t, {3}), (IdSet{0, 1, 2, 3}));  // tie: both
  EXPECT_EQ(WorkerCpus(t, {4}), (IdSet{0, 1, 2, 3}));  // unknown distances: all CPU nodes
  EXPECT_EQ(WorkerCpus(t, {0, 2}), (IdSet{0, 1, 2, 3}));
}

TEST(WorkerCpus, LimitedToUsableCpus) {
  numa::HostTopology t = LabHost();
  t.usable_cpus = IdSet{0, 1, 2};
  EXPECT_EQ(WorkerCpus(t, {1}), (IdSet{2}));
  EXPECT_EQ(WorkerCpus(t, {2}), (IdSet{2}));
  t.usable_cpus = IdSet{0, 1};
  EXPECT_EQ(WorkerCpus(t, {1}), (IdSet{0, 1})) << "no usable CPU near the node: all usable ones";
}

TEST(WorkerCpus, UnboundOrUnknownUsesAllUsableCpus) {
  numa::HostTopology t = LabHost();
  t.usable_cpus = IdSet{1, 3};
  EXPECT_EQ(WorkerCpus(t, {}), (IdSet{1, 3}));
  EXPECT_EQ(WorkerCpus(t, {9}), (IdSet{1, 3}));
}

TEST(DistributeThreads, FitsTheBudget) {
  EXPECT_EQ(DistributeThreads(std::vector<unsigned>{2, 2}, 4), (std::vector<unsigned>{2, 2}));
  EXPECT_EQ(DistributeThreads(std::vector<unsigned>{0, 3}, 8), (std::vector<unsigned>{1, 3}));
  EXPECT_EQ(DistributeThreads(std::vector<unsigned>{16, 16}, 0), (std::vector<unsigned>{16, 16}));
}

TEST(DistributeThreads, ScalesDownProportionally) {
  EXPECT_EQ(DistributeThreads(std::vector<unsigned>{4, 4}, 2), (std::vector<unsigned>{1, 1}));
  EXPECT_EQ(DistributeThreads(std::vector<unsigned>{6, 2}, 4), (std::vector<unsigned>{3, 1}));
  EXPECT_EQ(DistributeThreads(std::vector<unsigned>{8, 8, 8}, 12), (std::vector<unsigned>{4, 4, 4}));
  EXPECT_EQ(DistributeThreads(std::vector<unsigned>{3, 3, 3}, 2), (std::vector<unsigned>{1, 1, 1}))
      << "more regions than the budget: one each";
}

TEST(DistributeThreads, InvariantsOnRandomInputs) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<unsigned> wanted(1 + rng() % 6);
    for (unsigned& w : wanted) w = rng() % 20;
    unsigned budget = 1 + rng() % 24;
    std::vector<unsigned> got = DistributeThreads(wanted, budget);
    ASSERT_EQ(got.size(), wanted.size());
    unsigned want_total = 0, got_total = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_GE(got[i], 1u);
      ASSERT_LE(got[i], std::max(wanted[i], 1u));
      want_total += std::max(wanted[i], 1u);
      got_total += got[i];
    }
    if (wanted.size() <= budget)
      ASSERT_EQ(got_total, std::min(want_total, budget));
    else
      ASSERT_EQ(got_total, wanted.size());
  }
}

}  // namespace
}  // namespace qlaunch::prealloc
