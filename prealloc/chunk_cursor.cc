#include "prealloc/chunk_cursor.h"

#include <algorithm>

namespace qlaunch::prealloc {

uint64_t ChunkBytes(uint64_t size_bytes, uint64_t page_bytes, unsigned threads) {
  constexpr uint64_t kMin = 2ull << 20, kMax = 64ull << 20, kChunksPerThread = 8;
  uint64_t target = size_bytes / (std::max(threads, 1u) * kChunksPerThread);
  target = std::clamp(target, kMin, kMax);
  uint64_t pages = std::max<uint64_t>(1, (target + page_bytes - 1) / page_bytes);
  uint64_t region_pages = std::max<uint64_t>(1, (size_bytes + page_bytes - 1) / page_bytes);
  return std::min(pages, region_pages) * page_bytes;
}

}  // namespace qlaunch::prealloc
