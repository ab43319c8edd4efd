// Mapping: a MAP_SHARED view of a whole Memfd, unmapped on destruction. The populate workers
// write through it; the pages stay in the memfd after it is gone.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "common/id_set.h"
#include "prealloc/mem_policy.h"

namespace qlaunch::prealloc {

class Memfd;

struct MapOptions {
  // false: MAP_NORESERVE. hugetlb mappings then get no reservation at mmap time, and a short
  // pool only shows up when pages are populated (used by tests to exercise that path).
  bool reserve = true;
  // The nodes the region will be bound to, only to name them in a "pool exhausted" error.
  IdSet host_nodes;
};

class Mapping {
 public:
  Mapping() = default;
  // Maps the whole memfd. A hugetlb mapping reserves its pages here (see MapOptions): a pool
  // that is too small fails now with "hugepage pool exhausted ... for 2 MiB pages".
  static Mapping Map(const Memfd& memfd, const MapOptions& opts = {});

  Mapping(Mapping&& other) noexcept;
  Mapping& operator=(Mapping&& other) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();

  // mbind() the whole mapping. Call before any page is touched.
  void ApplyPolicy(const MemPolicy& policy, const std::string& what);

  std::byte* data() const { return addr_; }
  size_t size() const { return size_; }
  std::span<std::byte> bytes() const { return {addr_, size_}; }
  void reset();

 private:
  std::byte* addr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace qlaunch::prealloc
