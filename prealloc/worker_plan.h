// Worker planning: which CPUs populate a region placed on some host nodes, and how many
// threads each region gets within qlaunch's CPU budget. Pure functions: the `prealloc`
// command and the launcher share them, and tests run them on topologies built in code.
#pragma once

#include <span>
#include <vector>

#include "common/id_set.h"
#include "numa/host_topology.h"

namespace qlaunch::prealloc {

// The CPUs that should populate memory placed on `host_nodes`: the CPUs of those nodes that
// have CPUs, with each CPU-less node replaced by topo.NearestCpuNodes(node), intersected with
// topo.usable_cpus. Unbound memory (no nodes), unknown nodes only, or an empty intersection
// (our affinity excludes those nodes): all usable CPUs.
IdSet WorkerCpus(const numa::HostTopology& topo, const IdSet& host_nodes);

// Splits a thread budget among regions that want wanted[i] threads each (0 counts as 1).
// When the total fits the budget, everyone gets what they want; otherwise shares are
// proportional (largest remainders first), and every region keeps at least one thread, so
// the result exceeds the budget only when there are more regions than the budget.
// budget 0 means unlimited.
std::vector<unsigned> DistributeThreads(std::span<const unsigned> wanted, unsigned budget);

}  // namespace qlaunch::prealloc
