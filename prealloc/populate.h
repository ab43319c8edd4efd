// Populate: the worker engine. Faults in every page of several mapped regions at once, each
// region by its own pinned worker threads, within one thread budget.
//
// A worker pins itself to its region's CPU set, then takes chunks from the region's cursor
// until it is handed out, populating each with MADV_POPULATE_WRITE (Linux >= 5.14) or, where
// the kernel lacks it, by writing one byte per page (a SIGBUS then becomes an error, not a
// crash). The first error or the stop flag ends every worker at its next chunk.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/id_set.h"

namespace qlaunch::prealloc {

struct PopulateRegion {
  std::string name;        // for messages
  std::span<std::byte> memory;  // a MAP_SHARED mapping with the NUMA policy already applied
  uint64_t page_bytes = 0; // the mapping's page size
  bool hugetlb = false;    // failures are then "hugepage pool exhausted"
  IdSet host_nodes;        // for messages only ("on node 1")
  IdSet cpus;              // where its workers run; empty: not pinned
  unsigned threads = 0;    // wanted; 0 = one per CPU in `cpus` (1 when unpinned)
};

enum class PopulateMethod {
  kAuto,     // MADV_POPULATE_WRITE when the kernel has it, else kTouch
  kMadvise,  // MADV_POPULATE_WRITE; an error when the kernel lacks it
  kTouch,    // write one byte per page
  kZero,     // write zeros over every byte of pages already there (the warm pool's scrub: a page
             // a guest wrote to is zero again, on the node it was put on)
};

// bytes_done and bytes_total over all regions.
using ProgressFn = std::function<void(uint64_t bytes_done, uint64_t bytes_total)>;

struct PopulateOptions {
  unsigned max_threads = 0;  // budget over all regions; 0 = the CPUs this process may use
  PopulateMethod method = PopulateMethod::kAuto;
  const std::atomic<bool>* stop = nullptr;  // raised: workers stop at their next chunk
  ProgressFn progress;       // called from one reporter thread, then once at the end
  std::chrono::milliseconds progress_interval{250};
  uint64_t chunk_bytes = 0;  // 0: ChunkBytes(); else rounded up to a page multiple
};

struct RegionResult {
  std::string name;
  uint64_t bytes = 0;        // populated
  double seconds = 0;        // first worker start to last chunk done
  unsigned threads = 0;      // workers that ran on it
  IdSet cpus;                // the CPU set its workers were pinned to (empty: unpinned)
  IdSet observed_cpus;       // sched_getcpu() seen by its workers, after pinning
};

struct PopulateResult {
  std::vector<RegionResult> regions;  // in the order given
  uint64_t bytes = 0;
  double seconds = 0;
  unsigned threads = 0;      // concurrent workers
  PopulateMethod method = PopulateMethod::kAuto;  // the one used (never kAuto)
};

// Throws PreallocError on the first failure ("hugepage pool exhausted on node 0 for 2 MiB
// pages (needed X pages, populated Y)"), PreallocCancelled when the stop flag was raised.
// Every worker has finished when it returns or throws.
PopulateResult Populate(std::span<const PopulateRegion> regions, const PopulateOptions& opts = {});

// Whether this kernel has MADV_POPULATE_WRITE (probed once).
bool HaveMadvisePopulateWrite();

// The number of CPUs this process may run on (sched_getaffinity), at least 1.
unsigned UsableCpuCount();

const char* ToString(PopulateMethod method);

}  // namespace qlaunch::prealloc
