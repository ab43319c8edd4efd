#include "prealloc/populate.h"

#include <sched.h>

#include <gtest/gtest.h>

#include <mutex>

#include "prealloc/error.h"
#include "prealloc/mapping.h"
#include "prealloc/memfd.h"
#include "prealloc/test_util.h"

namespace qlaunch::prealloc {
namespace {

using testing::k2M;
using testing::kMiB;

// A memfd, its mapping, and the PopulateRegion describing it.
struct TestRegion {
  Memfd memfd;
  Mapping mapping;
  PopulateRegion region;

  TestRegion(const std::string& name, uint64_t size, uint64_t page, MapOptions mopts = {}) {
    memfd = Memfd::Create(name, size, page);
    mapping = Mapping::Map(memfd, mopts);
    region.name = name;
    region.memory = mapping.bytes();
    region.page_bytes = memfd.page_bytes();
    region.hugetlb = memfd.hugetlb();
  }
};

IdSet Affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  IdSet cpus;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.Insert(c);
  return cpus;
}

class PopulateMethods : public ::testing::TestWithParam<PopulateMethod> {};

TEST_P(PopulateMethods, OrdinaryPagesAllPopulated) {
  TestRegion r("p4k", 64 * kMiB, 4096);
  r.region.threads = 2;
  PopulateOptions opts;
  opts.method = GetParam();
  PopulateResult res = Populate({&r.region, 1}, opts);
  EXPECT_EQ(res.method, GetParam());
  EXPECT_EQ(res.bytes, 64 * kMiB);
  ASSERT_EQ(res.regions.size(), 1u);
  EXPECT_EQ(res.regions[0].bytes, 64 * kMiB);
  EXPECT_EQ(res.regions[0].threads, std::min(2u, UsableCpuCount()));
  EXPECT_EQ(testing::AllocatedBytes(r.memfd.fd()), 64 * kMiB);
  EXPECT_EQ(testing::ResidentThroughFreshMapping(r.memfd.fd(), 64 * kMiB), 64 * kMiB);
}

TEST_P(PopulateMethods, HugePagesTakeExactlyTheirPagesFromThePool) {
  auto pool = testing::HugepagePool::AtLeast(32);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = *FreeHugepages(k2M);
  TestRegion r("p2m", 64 * kMiB, k2M);
  r.region.threads = 2;
  PopulateOptions opts;
  opts.method = GetParam();
  PopulateResult res = Populate({&r.region, 1}, opts);
  EXPECT_EQ(res.bytes, 64 * kMiB);
  EXPECT_EQ(testing::AllocatedBytes(r.memfd.fd()), 64 * kMiB);
  r.mapping.reset();
  EXPECT_EQ(*FreeHugepages(k2M), free_before - 32);
  r.memfd.reset();
  EXPECT_EQ(*FreeHugepages(k2M), free_before);
}

INSTANTIATE_TEST_SUITE_P(Methods, PopulateMethods,
                         ::testing::Values(PopulateMethod::kMadvise, PopulateMethod::kTouch),
                         [](const auto& info) { return std::string(ToString(info.param)); });

TEST(Populate, AutoPicksMadviseOnThisKernel) {
  TestRegion r("auto", 4 * kMiB, 4096);
  PopulateResult res = Populate({&r.region, 1});
  EXPECT_EQ(res.method, HaveMadvisePopulateWrite() ? PopulateMethod::kMadvise : PopulateMethod::kTouch);
  EXPECT_EQ(res.bytes, 4 * kMiB);
}

TEST(Populate, RegionsRunConcurrentlyWithinTheBudget) {
  TestRegion a("a", 8 * kMiB, 4096), b("b", 12 * kMiB, 4096), c("c", 20 * kMiB, 4096);
  for (TestRegion* r : {&a, &b, &c}) r->region.threads = 4;
  std::vector<PopulateRegion> regions{a.region, b.region, c.region};
  PopulateOptions opts;
  opts.max_threads = 2;
  opts.chunk_bytes = 1 * kMiB;
  PopulateResult res = Populate(regions, opts);
  EXPECT_EQ(res.threads, 2u) << "never more workers than the budget";
  EXPECT_EQ(res.bytes, 40 * kMiB);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(res.regions[i].name, regions[i].name);
    EXPECT_EQ(res.regions[i].bytes, regions[i].memory.size());
    EXPECT_EQ(res.regions[i].threads, 1u) << "three regions, budget two: one each";
  }
  for (TestRegion* r : {&a, &b, &c})
    EXPECT_EQ(testing::AllocatedBytes(r->memfd.fd()), r->region.memory.size());
}

TEST(Populate, WorkersRunOnTheirRegionsCpus) {
  const IdSet usable = Affinity();
  if (!usable.Contains(0) || !usable.Contains(1)) GTEST_SKIP() << "needs CPUs 0 and 1, have " << usable.ToString();
  TestRegion only1("on1", 32 * kMiB, 4096);
  only1.region.cpus = IdSet{1};
  only1.region.threads = 2;
  PopulateOptions opts;
  opts.chunk_bytes = 1 * kMiB;
  PopulateResult res = Populate({&only1.region, 1}, opts);
  EXPECT_EQ(res.regions[0].threads, 2u);
  EXPECT_EQ(res.regions[0].cpus, (IdSet{1}));
  EXPECT_EQ(res.regions[0].observed_cpus, (IdSet{1})) << "all workers ran on CPU 1";

  TestRegion r0("r0", 16 * kMiB, 4096), r1("r1", 16 * kMiB, 4096);
  r0.region.cpus = IdSet{0};
  r1.region.cpus = IdSet{1};
  std::vector<PopulateRegion> both{r0.region, r1.region};
  res = Populate(both, opts);
  EXPECT_EQ(res.regions[0].observed_cpus, (IdSet{0}));
  EXPECT_EQ(res.regions[1].observed_cpus, (IdSet{1}));
  EXPECT_EQ(Affinity(), usable) << "the caller's own affinity is untouched";
}

TEST(Populate, UnpinnedWorkersStayWithinOurCpus) {
  TestRegion r("free", 16 * kMiB, 4096);
  r.region.threads = 2;
  PopulateResult res = Populate({&r.region, 1});
  EXPECT_TRUE(res.regions[0].cpus.Empty());
  EXPECT_FALSE(res.regions[0].observed_cpus.Empty());
  EXPECT_TRUE(res.regions[0].observed_cpus.IsSubsetOf(Affinity()));
}

TEST(Populate, ProgressIsMonotonicAndEndsAtTheTotal) {
  TestRegion r("progress", 64 * kMiB, 4096);
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  PopulateOptions opts;
  opts.chunk_bytes = 4096 * 16;
  opts.progress_interval = std::chrono::milliseconds(1);
  opts.progress = [&](uint64_t done, uint64_t total) {
    std::lock_guard lock(mu);
    calls.emplace_back(done, total);
  };
  Populate({&r.region, 1}, opts);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), std::make_pair(64 * kMiB, 64 * kMiB));
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, 64 * kMiB);
    EXPECT_LE(calls[i].first, calls[i].second);
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
    }
  }
}

TEST(Populate, StopFlagRaisedBeforehandPopulatesNothing) {
  TestRegion r("stopped", 16 * kMiB, 4096);
  std::atomic<bool> stop{true};
  PopulateOptions opts;
  opts.stop = &stop;
  try {
    Populate({&r.region, 1}, opts);
    FAIL() << "not cancelled";
  } catch (const PreallocCancelled& e) {
    EXPECT_EQ(e.bytes_done(), 0u);
    EXPECT_EQ(e.bytes_total(), 16 * kMiB);
  }
  EXPECT_EQ(testing::AllocatedBytes(r.memfd.fd()), 0u);
}

TEST(Populate, StopFlagEndsWorkersEarly) {
  // One page per chunk over 1 GiB: the flag, raised at the first progress report, stops the
  // worker long before the end.
  TestRegion r("cancel", 1024 * kMiB, 4096);
  r.region.threads = 1;
  std::atomic<bool> stop{false};
  PopulateOptions opts;
  opts.stop = &stop;
  opts.chunk_bytes = 4096;
  opts.progress_interval = std::chrono::milliseconds(1);
  opts.progress = [&](uint64_t done, uint64_t) {
    if (done > 0) stop = true;
  };
  try {
    Populate({&r.region, 1}, opts);
    FAIL() << "not cancelled";
  } catch (const PreallocCancelled& e) {
    EXPECT_GT(e.bytes_done(), 0u);
    EXPECT_LT(e.bytes_done(), e.bytes_total());
    EXPECT_EQ(testing::AllocatedBytes(r.memfd.fd()), e.bytes_done());
  }
}

// Without a reservation at mmap time, a short pool shows up while populating: ENOMEM/EFAULT
// from MADV_POPULATE_WRITE, SIGBUS when touching.
TEST_P(PopulateMethods, ShortPoolIsAnErrorNamingNodeAndPageSize) {
  auto pool = testing::HugepagePool::AtLeast(16);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  if (testing::ReadNumber("/proc/sys/vm/nr_overcommit_hugepages").value_or(0) != 0)
    GTEST_SKIP() << "surplus hugepages are allowed (nr_overcommit_hugepages)";
  const uint64_t free_before = *FreeHugepages(k2M);
  const uint64_t pages = free_before + 8;
  {
    MapOptions noreserve;
    noreserve.reserve = false;
    TestRegion r("short", pages * k2M, k2M, noreserve);
    r.region.host_nodes = IdSet{0};
    r.region.threads = 2;
    PopulateOptions opts;
    opts.method = GetParam();
    try {
      Populate({&r.region, 1}, opts);
      FAIL() << "no error";
    } catch (const PreallocCancelled&) {
      FAIL() << "not a cancellation";
    } catch (const PreallocError& e) {
      EXPECT_EQ(std::string(e.what()),
                "memory 'short': hugepage pool exhausted on node 0 for 2 MiB pages (needed " +
                    std::to_string(pages) + " pages, populated " + std::to_string(free_before) +
                    "; 0 free on node 0)");
    }
  }
  EXPECT_EQ(*FreeHugepages(k2M), free_before) << "every page back in the pool";
}

}  // namespace
}  // namespace qlaunch::prealloc
