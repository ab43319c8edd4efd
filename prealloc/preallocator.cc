#include "prealloc/preallocator.h"

#include <chrono>

#include "prealloc/prepared_memory.h"

namespace qlaunch::prealloc {

PreallocResult Preallocate(std::span<const RegionSpec> specs, const PreallocOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  PreparedMemory memory = PreparedMemory::Create(specs, opts.reserve);

  PopulateOptions popts;
  popts.max_threads = opts.max_threads;
  popts.method = opts.method;
  popts.stop = opts.stop;
  popts.progress = opts.progress;
  PopulateResult populated = Populate(memory.regions(), popts);
  std::vector<Memfd> memfds = memory.TakeMemfds();  // unmapped: the memfds keep the pages

  PreallocResult result;
  for (size_t i = 0; i < specs.size(); ++i)
    result.regions.push_back({std::move(memfds[i]), std::move(populated.regions[i])});
  result.bytes = populated.bytes;
  result.populate_seconds = populated.seconds;
  result.threads = populated.threads;
  result.method = populated.method;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace qlaunch::prealloc
