// HostTopology: the host's NUMA layout as read from sysfs (rooted at any path, so fixture
// trees work like the real /sys). No QEMU knowledge.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/id_set.h"

namespace qlaunch::numa {

struct HugePool {
  uint64_t total = 0;  // pages
  uint64_t free = 0;   // pages
};

struct HostNode {
  unsigned id = 0;
  IdSet cpus;                              // empty: a CPU-less (memory-only) node
  uint64_t memory_bytes = 0;               // 0 when unknown (no meminfo)
  std::map<unsigned, unsigned> distances;  // node id -> distance; empty when unknown
  std::map<uint64_t, HugePool> hugepages;  // page size in bytes -> pool; empty when unknown

  bool HasCpus() const { return !cpus.Empty(); }
};

struct HostTopology {
  std::filesystem::path root;          // the sysfs root it was read from
  std::vector<HostNode> nodes;         // sorted by id; ids may be sparse
  IdSet usable_cpus;                   // CPUs this process may run on (online ∩ affinity)
  std::vector<uint64_t> hugepage_sizes;      // page sizes the kernel supports, bytes, ascending
  uint64_t default_hugepage_bytes = 0;       // 0 when unknown
  std::map<uint64_t, std::string> hugetlbfs_mounts;  // page size -> mount point
  IdSet online_cpus;  // devices/system/cpu/online, else the union of the node cpulists
  // Non-fatal findings, e.g. libnuma disagreeing with sysfs on the real /sys (never for fixtures).
  std::vector<Diagnostic> warnings;

  const HostNode* Node(unsigned id) const;  // nullptr when absent
  IdSet NodeIds() const;
  IdSet CpuNodeIds() const;                 // nodes that have CPUs
  std::optional<unsigned> NodeOfCpu(unsigned cpu) const;
  IdSet NodesOfCpus(const IdSet& cpus) const;
  IdSet CpusOfNodes(const IdSet& nodes) const;
  // For a node with CPUs: {node}. For a CPU-less node: the CPU nodes at the smallest distance
  // from it (all of them on a tie; all CPU nodes when distances are unknown).
  IdSet NearestCpuNodes(unsigned node) const;
  unsigned Distance(unsigned from, unsigned to) const;  // 10 for self, 20 when unknown
};

struct ReadOptions {
  std::filesystem::path sysfs_root = "/sys";
  // Where hugetlbfs mounts are read from. Default: /proc/mounts for the real /sys, and
  // <sysfs_root>/mounts (if present) for a fixture tree.
  std::optional<std::filesystem::path> mounts_file;
  // Restrict usable_cpus by sched_getaffinity (only meaningful for the real /sys).
  std::optional<bool> use_affinity;
};

// Throws std::runtime_error naming the path when the tree has no NUMA node directory at all.
// Missing optional files (distance, meminfo, hugepages) leave those fields unknown.
// The default huge page size comes from /proc/meminfo for the real /sys, from
// <sysfs_root>/qlaunch-default-hugepagesize (a kB number) for a fixture tree, else 2 MiB when
// that size exists. For the real /sys only, libnuma is consulted as a cross-check: any
// disagreement with sysfs lands in `warnings`.
HostTopology ReadHostTopology(const ReadOptions& opts = {});

// The per-node hugepage pools of `host` read again from the tree it was read from (its root),
// nothing else: the counts now, after other processes may have taken or given pages. Cheaper
// than a whole ReadHostTopology (no CPUs, distances, meminfo, mounts or libnuma).
void RereadHugepagePools(HostTopology* host);

}  // namespace qlaunch::numa
