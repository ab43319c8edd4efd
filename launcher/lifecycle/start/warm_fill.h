// Filling and scrubbing the warm pool (launcher/host/warm_pool.h), by the preallocator's pinned,
// NUMA-local workers (prealloc/populate.h):
//   FillPool   `qlaunch pool fill`: new files shaped like a domain's launcher backends, their
//              pages reserved at once under the hugepage pool lock (a short pool fails there,
//              before anything is made), then faulted in set by set, each set marked warm
//              when it is whole. A failure or a stop gives back every file not yet warm.
//   ScrubPool  `qlaunch pool scrub` (what a domain's end starts detached): each dirty file no
//              process holds is zeroed by workers on the CPUs nearest its node and only then
//              marked warm; a scrubber killed on the way leaves a scrub file that the next
//              pool operation makes dirty again (PoolDir::RecoverStale).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "launcher/lifecycle/start/warm_claims.h"
#include "numa/host_topology.h"
#include "prealloc/populate.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

struct ShapedBackend {
  std::string id;
  WarmShape shape;
  unsigned threads = 0;  // the backend's launcher threads (0: one per CPU of its node's nearest)
};

// One set: the plan's launcher backends as the pool holds them. Throws std::runtime_error naming
// `what` (the XML) and each backend the pool cannot hold, and why.
std::vector<ShapedBackend> PoolShapes(const qemu::LaunchPlan& plan, const numa::HostTopology& host,
                                      const std::string& what);

struct PoolFillResult {
  unsigned sets = 0;    // made warm
  uint64_t bytes = 0;   // in them
  double seconds = 0;   // faulting them in
};
// `count` sets of `set`. Throws (everything not warm given back) on a short pool, a full
// hugetlbfs, a failed populate, or PreallocCancelled when *stop rose (the sets done stay warm).
PoolFillResult FillPool(const std::vector<ShapedBackend>& set, unsigned count, const numa::HostTopology& host,
                        const std::atomic<bool>* stop, prealloc::ProgressFn progress);

struct ScrubbedFile {
  unsigned node = 0;
  uint64_t bytes = 0;
  IdSet cpus;           // where its workers were pinned: the CPUs nearest its node
  IdSet observed_cpus;  // where they were seen running
};
struct ScrubResult {
  unsigned files = 0;
  uint64_t bytes = 0;
  double seconds = 0;  // zeroing them
  std::vector<ScrubbedFile> scrubbed;
};
// Scrubs every dirty file of every page size's pool, one at a time, until none is left.
ScrubResult ScrubPool(const numa::HostTopology& host, const std::atomic<bool>* stop = nullptr);

}  // namespace qlaunch::launcher
