// Preallocate: the preallocator's entry point. For each region it creates a memfd, maps it,
// applies the NUMA policy (PreparedMemory), populates all regions concurrently with pinned
// workers, unmaps, and hands back the memfds holding the pages. On failure or cancellation nothing is left behind: every
// mapping is gone and every memfd closed before the exception leaves.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/id_set.h"
#include "prealloc/memfd.h"
#include "prealloc/populate.h"

namespace qlaunch::prealloc {

struct RegionSpec {
  std::string name;            // for messages: the backend id ("ram-node0")
  std::string memfd_name;      // as /proc/PID/fd shows it ("memfd:<memfd_name>"); "": name
  uint64_t size_bytes = 0;     // a positive multiple of page_bytes
  uint64_t page_bytes = 4096;  // 0 or 4096: ordinary pages; else the hugetlb page size
  IdSet host_nodes;            // empty: unbound
  std::string policy;          // "", "bind", "preferred", "interleave" ("" iff no host_nodes)
  IdSet worker_cpus;           // where its workers run (see WorkerCpus()); empty: unpinned
  unsigned threads = 0;        // 0: one per worker CPU
};

struct PreallocOptions {
  unsigned max_threads = 0;                 // over all regions; 0: the CPUs we may use
  const std::atomic<bool>* stop = nullptr;  // e.g. SignalStop::flag()
  ProgressFn progress;                      // (bytes_done, bytes_total), ~4 times a second
  PopulateMethod method = PopulateMethod::kAuto;
  bool reserve = true;  // false: map with MAP_NORESERVE (a short pool fails while populating)
};

struct PreallocatedRegion {
  Memfd memfd;          // CLOEXEC; holds the populated pages
  RegionResult result;  // bytes, seconds, threads, cpus, observed_cpus
};

struct PreallocResult {
  std::vector<PreallocatedRegion> regions;  // in the order of the specs
  uint64_t bytes = 0;
  double seconds = 0;   // creating, mapping, binding, populating and unmapping everything
  double populate_seconds = 0;
  unsigned threads = 0; // concurrent workers
  PopulateMethod method = PopulateMethod::kAuto;  // the one used
};

// Throws PreallocError (PreallocCancelled when opts.stop was raised) after releasing
// everything it created.
PreallocResult Preallocate(std::span<const RegionSpec> specs, const PreallocOptions& opts = {});

}  // namespace qlaunch::prealloc
