// The planner tests build their hosts in code (tests/support/plan_fixtures.h) so each case reads
// plainly; this keeps those hosts honest: each must equal what the numa reader gets from the
// sysfs fixture tree it mirrors, in every field the planner looks at.
#include <gtest/gtest.h>

#include "numa/host_topology.h"
#include "tests/support/plan_fixtures.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

void ExpectSameForPlanning(const numa::HostTopology& in_code, const std::string& fixture) {
  SCOPED_TRACE(fixture);
  numa::ReadOptions opts;
  opts.sysfs_root = std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/hosts/" + fixture;
  numa::HostTopology read = numa::ReadHostTopology(opts);
  EXPECT_EQ(in_code.NodeIds(), read.NodeIds());
  EXPECT_EQ(in_code.CpuNodeIds(), read.CpuNodeIds());
  EXPECT_EQ(in_code.usable_cpus, read.usable_cpus);
  EXPECT_EQ(in_code.default_hugepage_bytes, read.default_hugepage_bytes);
  EXPECT_EQ(in_code.hugetlbfs_mounts, read.hugetlbfs_mounts);
  for (const auto& node : read.nodes) {
    const numa::HostNode* mine = in_code.Node(node.id);
    ASSERT_NE(mine, nullptr) << node.id;
    EXPECT_EQ(mine->cpus, node.cpus) << node.id;
    for (unsigned to : read.NodeIds()) EXPECT_EQ(in_code.Distance(node.id, to), read.Distance(node.id, to));
    EXPECT_EQ(in_code.NearestCpuNodes(node.id), read.NearestCpuNodes(node.id)) << node.id;
  }
}

TEST(PlanFixtures, HostsBuiltInCodeMatchTheSysfsFixtures) {
  ExpectSameForPlanning(TwoNodeHost(), "two-node");
  ExpectSameForPlanning(FourNodeCpulessHost(), "four-node-cpuless");
  ExpectSameForPlanning(SparseIdsHost(), "sparse-ids");
  ExpectSameForPlanning(SingleNodeHost(), "single-node");
}

}  // namespace
}  // namespace qlaunch::testing
