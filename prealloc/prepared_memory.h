// PreparedMemory: the first half of preallocation. Every region's memfd is created, mapped and
// bound to its host nodes, ready for Populate(); nothing is faulted in yet. Preallocate() uses
// it and populates at once; `qlaunch start` spawns QEMU (which inherits the memfds) in between.
// Destruction unmaps first, then closes the memfds: whatever else holds them keeps the pages.
#pragma once

#include <span>
#include <vector>

#include "prealloc/mapping.h"
#include "prealloc/memfd.h"
#include "prealloc/populate.h"
#include "prealloc/preallocator.h"

namespace qlaunch::prealloc {

class PreparedMemory {
 public:
  // Checks every spec's policy before creating anything; throws PreallocError (with everything
  // created so far released). reserve=false maps with MAP_NORESERVE.
  static PreparedMemory Create(std::span<const RegionSpec> specs, bool reserve = true);

  PreparedMemory() = default;
  PreparedMemory(PreparedMemory&&) = default;
  PreparedMemory& operator=(PreparedMemory&&) = default;

  bool empty() const { return memfds_.empty(); }
  const std::vector<Memfd>& memfds() const { return memfds_; }
  // One per spec, in order, over the mappings: what Populate() takes. Empty after Unmap().
  std::span<const PopulateRegion> regions() const { return regions_; }

  void Unmap();                    // the memfds alone hold the pages
  std::vector<Memfd> TakeMemfds();  // unmaps, then hands the memfds over
  void Release();                  // unmaps and closes everything

 private:
  std::vector<Memfd> memfds_;      // declared first: destroyed after the mappings
  std::vector<Mapping> mappings_;
  std::vector<PopulateRegion> regions_;
};

}  // namespace qlaunch::prealloc
