#include "launcher/bench/bench_kernel.h"

#include <gtest/gtest.h>

#include "tests/support/plan_fixtures.h"

namespace qlaunch::launcher {
namespace {

using namespace qlaunch::testing;

TEST(KernelReference, SizeAndPageOfTheDomain) {
  auto d = MakeDomain("vm1", 4ull << 30);
  KernelReferenceSize r = ReferenceSizeOf(d, kPage2M);  // no <hugepages>: ordinary pages
  EXPECT_EQ(r.bytes, 4ull << 30);
  EXPECT_EQ(r.page_bytes, 4096u);
  SetHugepages(d);  // <hugepages/> alone: the host's default size
  EXPECT_EQ(ReferenceSizeOf(d, kPage2M).page_bytes, kPage2M);
  SetHugepages(d, {Page(kPage1G)});
  r = ReferenceSizeOf(d, kPage2M);
  EXPECT_EQ(r.page_bytes, kPage1G);
  EXPECT_EQ(r.bytes, 4ull << 30);
  SetHugepages(d, {Page(kPage1G, IdSet{0}), Page(kPage2M, IdSet{1})});
  EXPECT_THROW(ReferenceSizeOf(d, kPage2M), std::runtime_error);
  auto odd = MakeDomain("vm1", 3ull << 20);  // 3 MiB: no whole number of 2 MiB pages
  SetHugepages(odd, {Page(kPage2M)});
  EXPECT_THROW(ReferenceSizeOf(odd, kPage2M), std::runtime_error);
}

TEST(KernelReference, FindsAnExplicitProgramOrNothing) {
  EXPECT_EQ(FindPopulateRef("/bin/true"), "/bin/true");
  EXPECT_EQ(FindPopulateRef("/nonexistent/populate_ref"), std::nullopt);
  EXPECT_EQ(FindPopulateRef("/etc/passwd"), std::nullopt);  // not executable
}

}  // namespace
}  // namespace qlaunch::launcher
