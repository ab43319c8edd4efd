// ChunkCursor: hands out consecutive page-aligned chunks of one region to any number of
// workers, lock-free (one atomic fetch_add per chunk). Each byte is handed out exactly once.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

namespace qlaunch::prealloc {

// The chunk size for `threads` workers on a region: about 8 chunks per worker, between 2 MiB
// and 64 MiB, a multiple of the page size (at least one page) and no more than the region.
uint64_t ChunkBytes(uint64_t size_bytes, uint64_t page_bytes, unsigned threads);

struct Chunk {
  uint64_t offset = 0;
  uint64_t length = 0;
  friend bool operator==(const Chunk&, const Chunk&) = default;
};

class ChunkCursor {
 public:
  // Precondition: chunk_bytes > 0.
  ChunkCursor(uint64_t size_bytes, uint64_t chunk_bytes) : size_(size_bytes), chunk_(chunk_bytes) {}

  // The next chunk, or std::nullopt once the region is handed out. Thread-safe.
  std::optional<Chunk> Next() {
    uint64_t offset = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (offset >= size_) return std::nullopt;
    return Chunk{offset, std::min(chunk_, size_ - offset)};
  }

  uint64_t size() const { return size_; }
  uint64_t chunk_bytes() const { return chunk_; }

 private:
  uint64_t size_;
  uint64_t chunk_;
  std::atomic<uint64_t> next_{0};  // may run past size_ by (workers * chunk_): no wrap in 64 bits
};

}  // namespace qlaunch::prealloc
