#include "launcher/lifecycle/start/start_affinity.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

// Two nodes with CPUs 0-3 and 4-7, and a CPU-less node 2 nearest to node 1.
numa::HostTopology Host() {
  numa::HostTopology host;
  for (unsigned id = 0; id < 3; ++id) {
    numa::HostNode n;
    n.id = id;
    if (id < 2) n.cpus = *IdSet::Parse(id == 0 ? "0-3" : "4-7");
    n.distances = {{0, id == 0 ? 10u : 20u}, {1, id == 1 ? 10u : id == 2 ? 15u : 20u}, {2, id == 2 ? 10u : 25u}};
    host.nodes.push_back(n);
  }
  host.usable_cpus = *IdSet::Parse("0-7");
  host.online_cpus = host.usable_cpus;
  return host;
}

qemu::MemoryBackend Backend(qemu::PreallocBy by, IdSet nodes) {
  qemu::MemoryBackend b;
  b.prealloc = by;
  b.host_nodes = std::move(nodes);
  b.policy = b.host_nodes.Empty() ? "" : "bind";
  return b;
}

qemu::QemuCaps OldQemu() {
  qemu::QemuCaps caps;
  caps.major = 5;
  caps.minor = 2;
  return caps;
}

TEST(PreallocAffinity, OldQemuIsNarrowedToTheFirstQemuBackendsNodes) {
  qemu::LaunchPlan plan;
  plan.backends.push_back(Backend(qemu::PreallocBy::kLauncher, IdSet{0}));  // not QEMU's
  plan.backends.push_back(Backend(qemu::PreallocBy::kQemu, IdSet{1}));
  plan.backends.push_back(Backend(qemu::PreallocBy::kQemu, IdSet{0}));
  EXPECT_EQ(PreallocAffinity(plan, OldQemu(), Host()), *IdSet::Parse("4-7"));
}

TEST(PreallocAffinity, CpuLessNodeUsesTheNearestCpuNode) {
  qemu::LaunchPlan plan;
  plan.backends.push_back(Backend(qemu::PreallocBy::kQemu, IdSet{2}));
  EXPECT_EQ(PreallocAffinity(plan, OldQemu(), Host()), *IdSet::Parse("4-7"));
}

TEST(PreallocAffinity, PlannedCpusWinWithinUsableOnes) {
  qemu::LaunchPlan plan;
  plan.backends.push_back(Backend(qemu::PreallocBy::kQemu, IdSet{0}));
  plan.backends.back().prealloc_cpus = *IdSet::Parse("2-3,9");
  EXPECT_EQ(PreallocAffinity(plan, OldQemu(), Host()), *IdSet::Parse("2-3"));
}

TEST(PreallocAffinity, NothingToNarrow) {
  numa::HostTopology host = Host();
  qemu::LaunchPlan plan;
  plan.backends.push_back(Backend(qemu::PreallocBy::kQemu, IdSet{1}));
  qemu::QemuCaps new_qemu = OldQemu();
  new_qemu.thread_context = true;
  EXPECT_TRUE(PreallocAffinity(plan, new_qemu, host).Empty()) << "thread-contexts do it";

  qemu::LaunchPlan unbound;
  unbound.backends.push_back(Backend(qemu::PreallocBy::kQemu, {}));
  EXPECT_TRUE(PreallocAffinity(unbound, OldQemu(), host).Empty());

  qemu::LaunchPlan none;
  none.backends.push_back(Backend(qemu::PreallocBy::kNone, IdSet{1}));
  EXPECT_TRUE(PreallocAffinity(none, OldQemu(), host).Empty());

  qemu::LaunchPlan both;  // bound to every node: all usable CPUs, so no change
  both.backends.push_back(Backend(qemu::PreallocBy::kQemu, IdSet{0, 1}));
  EXPECT_TRUE(PreallocAffinity(both, OldQemu(), host).Empty());
}

}  // namespace
}  // namespace qlaunch::launcher
