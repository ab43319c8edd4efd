// Helpers for the prealloc tests only (header-only: not part of the library).
#pragma once

#include "support/hugepages.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "prealloc/hugepage_pool.h"

namespace qlaunch::prealloc::testing {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t k2M = 2 * kMiB;

inline size_t CountOpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

inline std::optional<uint64_t> ReadNumber(const std::filesystem::path& path) {
  std::ifstream in(path);
  uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

inline bool WriteNumber(const std::filesystem::path& path, uint64_t v) {
  std::ofstream out(path);
  out << v;
  out.flush();
  return static_cast<bool>(out);
}

// Bytes the kernel has allocated to a file (st_blocks: page cache of a shmem or hugetlbfs file).
inline uint64_t AllocatedBytes(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

// Bytes of the memfd present in its page cache, seen through a fresh mapping (mincore works on
// shmem files; for hugetlbfs it only sees mapped pages, so use AllocatedBytes there).
inline uint64_t ResidentThroughFreshMapping(int fd, uint64_t size) {
  void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return 0;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((size + page - 1) / page);
  uint64_t resident = 0;
  if (mincore(p, size, vec.data()) == 0)
    for (unsigned char v : vec) resident += (v & 1) ? page : 0;
  munmap(p, size);
  return resident;
}

// The hugepage pool is sized through tests/support/hugepages.h (HugepagePool), which also
// serialises every test that counts free pages, across test binaries.
using qlaunch::testing::HugepagePool;

}  // namespace qlaunch::prealloc::testing
