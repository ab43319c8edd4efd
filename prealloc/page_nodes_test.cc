#include "prealloc/page_nodes.h"

#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstring>

#include "prealloc/error.h"
#include "prealloc/hugepage_pool.h"
#include "prealloc/mapping.h"
#include "prealloc/memfd.h"
#include "prealloc/test_util.h"

namespace qlaunch::prealloc {
namespace {

using testing::kMiB;

uint64_t Sum(const std::map<unsigned, uint64_t>& by_node) {
  uint64_t s = 0;
  for (auto [node, bytes] : by_node) s += bytes;
  return s;
}

// Writes one byte into each page of [0, bytes) of the memfd, through a mapping that then goes:
// the pages stay in the file and no process maps them any more.
void FillFirst(const Memfd& m, uint64_t bytes) {
  Mapping map = Mapping::Map(m);
  for (uint64_t off = 0; off < bytes; off += m.page_bytes()) map.data()[off] = std::byte{1};
}

TEST(PageNodes, AFilledFileNoOneMapsIsCountedWhole) {
  Memfd m = Memfd::Create("page-nodes", 8 * kMiB, 0);
  FillFirst(m, 8 * kMiB);
  PageNodes got = ReadPageNodes(m.fd(), 8 * kMiB, m.page_bytes());
  EXPECT_TRUE(got.complete);
  EXPECT_EQ(got.present_bytes, 8 * kMiB);
  EXPECT_EQ(Sum(got.bytes_by_node), 8 * kMiB);
  for (auto [node, bytes] : got.bytes_by_node) EXPECT_EQ(bytes % m.page_bytes(), 0u) << "node " << node;
}

TEST(PageNodes, AFileWithHolesIsRefusedAndNothingIsAdded) {
  Memfd m = Memfd::Create("page-nodes-holes", 8 * kMiB, 0);
  FillFirst(m, 3 * kMiB);
  PageNodes got = ReadPageNodes(m.fd(), 8 * kMiB, m.page_bytes());
  EXPECT_FALSE(got.complete);
  EXPECT_EQ(got.present_bytes, 3 * kMiB);
  EXPECT_TRUE(got.bytes_by_node.empty());
  EXPECT_EQ(testing::AllocatedBytes(m.fd()), 3 * kMiB) << "reading must not fill the holes";
}

TEST(PageNodes, HugetlbPagesAreCountedWithoutTakingAnyFromThePool) {
  auto pool = testing::HugepagePool::AtLeast(16);
  ASSERT_TRUE(pool.ok()) << pool.error();
  const uint64_t free_before = FreeHugepages(testing::k2M).value();
  {
    Memfd whole = Memfd::Create("page-nodes-huge", 8 * testing::k2M, testing::k2M);
    FillFirst(whole, 8 * testing::k2M);
    Memfd holes = Memfd::Create("page-nodes-huge-holes", 8 * testing::k2M, testing::k2M);
    FillFirst(holes, 3 * testing::k2M);
    ASSERT_EQ(FreeHugepages(testing::k2M).value(), free_before - 11);

    PageNodes got = ReadPageNodes(whole.fd(), 8 * testing::k2M, testing::k2M);
    EXPECT_TRUE(got.complete);
    EXPECT_EQ(Sum(got.bytes_by_node), 8 * testing::k2M);
    PageNodes partial = ReadPageNodes(holes.fd(), 8 * testing::k2M, testing::k2M);
    EXPECT_FALSE(partial.complete);
    EXPECT_EQ(partial.present_bytes, 3 * testing::k2M) << "hugetlbfs counts each page in the file's blocks";
    EXPECT_EQ(FreeHugepages(testing::k2M).value(), free_before - 11) << "reading took or gave pages";
  }
  EXPECT_EQ(FreeHugepages(testing::k2M).value(), free_before);
}

TEST(PageNodes, BindingsAreSeen) {
  // The nodes are the kernel's: bind the pages to the first node with memory and read them back there.
  Memfd m = Memfd::Create("page-nodes-bound", 4 * kMiB, 0);
  {
    Mapping map = Mapping::Map(m);
    map.ApplyPolicy(MemPolicy::Make("test region", "bind", IdSet{0}), "test region");
    std::memset(map.data(), 1, 4 * kMiB);
  }
  PageNodes got = ReadPageNodes(m.fd(), 4 * kMiB, m.page_bytes());
  ASSERT_TRUE(got.complete);
  EXPECT_EQ(got.bytes_by_node, (std::map<unsigned, uint64_t>{{0, 4 * kMiB}}));
}

TEST(PageNodes, BadArgumentsAreErrors) {
  Memfd m = Memfd::Create("page-nodes-short", 4 * kMiB, 0);
  EXPECT_THROW(ReadPageNodes(m.fd(), 8 * kMiB, m.page_bytes()), PreallocError) << "longer than the file";
  EXPECT_THROW(ReadPageNodes(m.fd(), 4 * kMiB + 1, m.page_bytes()), PreallocError) << "not whole pages";
  EXPECT_THROW(ReadPageNodes(-1, 4 * kMiB, m.page_bytes()), PreallocError);
}

}  // namespace
}  // namespace qlaunch::prealloc
