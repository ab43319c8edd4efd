#include "prealloc/chunk_cursor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace qlaunch::prealloc {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

// Pulls every chunk with `threads` concurrent takers; returns them sorted by offset.
std::vector<Chunk> Drain(ChunkCursor& cursor, unsigned threads) {
  std::vector<std::vector<Chunk>> taken(threads);
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&cursor, &mine = taken[t]] {
        while (auto c = cursor.Next()) mine.push_back(*c);
      });
  }
  std::vector<Chunk> all;
  for (auto& v : taken) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end(), [](const Chunk& a, const Chunk& b) { return a.offset < b.offset; });
  return all;
}

struct Case {
  uint64_t size, page;
};

TEST(ChunkCursor, EveryPageExactlyOnceAcrossThreadCounts) {
  const Case cases[] = {{4096, 4096},           {3 * 4096, 4096},     {100 * kMiB + 4096, 4096},
                        {1024 * kMiB, 4096},     {2 * kMiB, 2 * kMiB}, {130 * kMiB, 2 * kMiB},
                        {3 * 1024 * kMiB, 1024 * kMiB}};
  for (const Case& c : cases) {
    for (unsigned threads : {1u, 2u, 3u, 8u, 64u}) {
      SCOPED_TRACE(testing::Message() << "size " << c.size << " page " << c.page << " threads " << threads);
      const uint64_t chunk = ChunkBytes(c.size, c.page, threads);
      ASSERT_GT(chunk, 0u);
      EXPECT_EQ(chunk % c.page, 0u);
      EXPECT_LE(chunk, std::max(c.size, c.page));
      EXPECT_LE(chunk, std::max<uint64_t>(64 * kMiB, c.page));
      ChunkCursor cursor(c.size, chunk);
      std::vector<Chunk> all = Drain(cursor, threads);
      ASSERT_FALSE(all.empty());
      uint64_t expect = 0;
      for (const Chunk& ch : all) {
        ASSERT_EQ(ch.offset, expect) << "gap or overlap";
        ASSERT_GT(ch.length, 0u);
        ASSERT_EQ(ch.offset % c.page, 0u);
        ASSERT_EQ(ch.length % c.page, 0u);
        expect = ch.offset + ch.length;
      }
      EXPECT_EQ(expect, c.size);
      EXPECT_EQ(cursor.Next(), std::nullopt);
    }
  }
}

TEST(ChunkCursor, ManySmallChunksUnderContention) {
  // One page per chunk: 16384 chunks fought over by 8 threads.
  ChunkCursor cursor(16384 * 4096ull, 4096);
  std::vector<Chunk> all = Drain(cursor, 8);
  ASSERT_EQ(all.size(), 16384u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], (Chunk{i * 4096, 4096}));
}

TEST(ChunkCursor, ChunkSizeScalesWithThreadsWithinBounds) {
  EXPECT_EQ(ChunkBytes(1024 * kMiB, 4096, 1), 64 * kMiB);    // 128 MiB per chunk capped
  EXPECT_EQ(ChunkBytes(1024 * kMiB, 4096, 8), 16 * kMiB);    // 8 chunks per thread
  EXPECT_EQ(ChunkBytes(8 * kMiB, 4096, 4), 2 * kMiB);        // floor of 2 MiB
  EXPECT_EQ(ChunkBytes(1 * kMiB, 4096, 4), 1 * kMiB);        // never past the region
  EXPECT_EQ(ChunkBytes(4096ull << 20, 1024 * kMiB, 2), 1024 * kMiB);  // at least a page
}

}  // namespace
}  // namespace qlaunch::prealloc
