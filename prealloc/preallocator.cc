#include "prealloc/preallocator.h"

#include <chrono>

#include "prealloc/mapping.h"
#include "prealloc/mem_policy.h"

namespace qlaunch::prealloc {

PreallocResult Preallocate(std::span<const RegionSpec> specs, const PreallocOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  // Check every spec before creating anything.
  std::vector<MemPolicy> policies;
  for (const RegionSpec& s : specs)
    policies.push_back(MemPolicy::Make("memory '" + s.name + "'", s.policy, s.host_nodes));

  std::vector<Memfd> memfds;
  std::vector<Mapping> mappings;  // destroyed before memfds on any exit
  std::vector<PopulateRegion> regions;
  for (size_t i = 0; i < specs.size(); ++i) {
    const RegionSpec& s = specs[i];
    memfds.push_back(Memfd::Create(s.name, s.size_bytes, s.page_bytes));
    const Memfd& fd = memfds.back();
    MapOptions mopts;
    mopts.reserve = opts.reserve;
    mopts.host_nodes = s.host_nodes;
    mappings.push_back(Mapping::Map(fd, mopts));
    mappings.back().ApplyPolicy(policies[i], "memory '" + s.name + "'");

    PopulateRegion r;
    r.name = s.name;
    r.memory = mappings.back().bytes();
    r.page_bytes = fd.page_bytes();
    r.hugetlb = fd.hugetlb();
    r.host_nodes = s.host_nodes;
    r.cpus = s.worker_cpus;
    r.threads = s.threads;
    regions.push_back(std::move(r));
  }

  PopulateOptions popts;
  popts.max_threads = opts.max_threads;
  popts.method = opts.method;
  popts.stop = opts.stop;
  popts.progress = opts.progress;
  PopulateResult populated = Populate(regions, popts);
  mappings.clear();  // the memfds keep the pages

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
