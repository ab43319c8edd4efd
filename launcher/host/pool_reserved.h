// The true count of a hugepage pool. The kernel's free count (free_hugepages, per node and per
// size) still includes pages that a mapping has reserved but not faulted in yet: a start whose
// memfds or QEMU backends are mapped and still filling, or any other hugetlb mapping. Those are
// counted once per page size in resv_hugepages (never per node). So the pages a new start can
// have are free minus reserved, per page size; per node only where that size's pool sits on one
// node. Where it does not, the start holds the pool lock (pool_lock.h) until its fill is done.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

#include "numa/host_topology.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// Page size in bytes -> pages reserved but not yet faulted in, from
// <sysfs_root>/kernel/mm/hugepages/hugepages-<kB>kB/resv_hugepages for each of `sizes`
// (0 where the file is missing, as in fixture trees that do not model it).
std::map<uint64_t, uint64_t> ReadReservedHugepages(const std::filesystem::path& sysfs_root,
                                                   const std::vector<uint64_t>& sizes);

// The reserved pages per size as ReadReservedHugepages, read together with the size's free
// count: free and reserved are two reads, and a page faulted between them leaves both one lower,
// so free read before it and reserved after would count that page as free. Each size's free,
// reserved and free again are read back to back until free stood still; where the size's pool
// sits on one node, that node's free count in `host` becomes the one read with reserved.
std::map<uint64_t, uint64_t> ReadReservedHugepagesConsistently(numa::HostTopology* host);

// How many nodes of `host` have a pool (total > 0) of `page_bytes` pages.
size_t NodesWithPool(const numa::HostTopology& host, uint64_t page_bytes);

// Whether free minus reserved is exact for every pool the needs touch, per node too: true when
// each needed page size has its pool on at most one node. Then a start may release the pool
// lock once its pages are reserved (mapped); otherwise it keeps it until they are faulted in.
bool ReservedCountIsExactPerNode(const std::vector<qemu::LaunchPlan::PoolNeed>& needs,
                                 const numa::HostTopology& host);

}  // namespace qlaunch::launcher
