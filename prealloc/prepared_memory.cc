#include "prealloc/prepared_memory.h"

#include <string>

#include "prealloc/mem_policy.h"

namespace qlaunch::prealloc {

PreparedMemory PreparedMemory::Create(std::span<const RegionSpec> specs, bool reserve) {
  std::vector<MemPolicy> policies;
  for (const RegionSpec& s : specs) policies.push_back(MemPolicy::Make("memory '" + s.name + "'", s.policy, s.host_nodes));

  PreparedMemory m;
  for (size_t i = 0; i < specs.size(); ++i) {
    const RegionSpec& s = specs[i];
    m.memfds_.push_back(Memfd::Create(s.memfd_name.empty() ? s.name : s.memfd_name, s.size_bytes, s.page_bytes));
    const Memfd& fd = m.memfds_.back();
    MapOptions mopts;
    mopts.reserve = reserve;
    mopts.host_nodes = s.host_nodes;
    m.mappings_.push_back(Mapping::Map(fd, mopts));
    m.mappings_.back().ApplyPolicy(policies[i], "memory '" + s.name + "'");

    PopulateRegion r;
    r.name = s.name;
    r.memory = m.mappings_.back().bytes();
    r.page_bytes = fd.page_bytes();
    r.hugetlb = fd.hugetlb();
    r.host_nodes = s.host_nodes;
    r.cpus = s.worker_cpus;
    r.threads = s.threads;
    m.regions_.push_back(std::move(r));
  }
  return m;
}

void PreparedMemory::Unmap() {
  regions_.clear();
  mappings_.clear();
}

std::vector<Memfd> PreparedMemory::TakeMemfds() {
  Unmap();
  return std::move(memfds_);
}

void PreparedMemory::Release() {
  Unmap();
  memfds_.clear();
}

}  // namespace qlaunch::prealloc
