#include "prealloc/mem_policy.h"

#include <numaif.h>

#include <gtest/gtest.h>

#include "prealloc/error.h"
#include "prealloc/mapping.h"
#include "prealloc/memfd.h"
#include "prealloc/test_util.h"

namespace qlaunch::prealloc {
namespace {

using testing::kMiB;

bool HaveNuma() { return get_mempolicy(nullptr, nullptr, 0, nullptr, 0) == 0; }

// The policy of the VMA (or shared policy of the file) at addr, and its node mask.
std::pair<int, IdSet> PolicyAt(void* addr) {
  int mode = -1;
  unsigned long mask[16] = {};
  EXPECT_EQ(get_mempolicy(&mode, mask, sizeof mask * 8, addr, MPOL_F_ADDR), 0);
  IdSet nodes;
  for (unsigned n = 0; n < sizeof mask * 8; ++n)
    if (mask[n / 64] & (1ul << (n % 64))) nodes.Insert(n);
  return {mode, nodes};
}

TEST(MemPolicy, ParsesQemuPolicies) {
  EXPECT_EQ(ParsePolicyMode(""), PolicyMode::kDefault);
  EXPECT_EQ(ParsePolicyMode("bind"), PolicyMode::kBind);
  EXPECT_EQ(ParsePolicyMode("preferred"), PolicyMode::kPreferred);
  EXPECT_EQ(ParsePolicyMode("interleave"), PolicyMode::kInterleave);
  EXPECT_EQ(ParsePolicyMode("strict"), std::nullopt);
}

TEST(MemPolicy, RejectsInconsistentSpecs) {
  EXPECT_THROW(MemPolicy::Make("r", "bind", {}), PreallocError);
  EXPECT_THROW(MemPolicy::Make("r", "", {0}), PreallocError);
  EXPECT_THROW(MemPolicy::Make("r", "strict", {0}), PreallocError);
  EXPECT_EQ(MemPolicy::Make("r", "", {}).mode, PolicyMode::kDefault);
  EXPECT_EQ(MemPolicy::Make("r", "interleave", {0}).nodes, (IdSet{0}));
}

class MemPolicyOnMapping : public ::testing::TestWithParam<uint64_t> {};

TEST_P(MemPolicyOnMapping, AppliedBeforeTouching) {
  if (!HaveNuma()) GTEST_SKIP() << "kernel without NUMA policy support";
  const uint64_t page = GetParam();
  std::optional<testing::HugepagePool> pool;
  if (page != 4096) {
    ASSERT_EQ(page, qlaunch::testing::DefaultHugepageBytes());
    pool.emplace(testing::HugepagePool::AtLeast(4));
    if (!pool->ok()) GTEST_SKIP() << pool->error();
  }
  for (const char* policy : {"bind", "preferred", "interleave"}) {
    SCOPED_TRACE(policy);
    Memfd m = Memfd::Create("policy", 4 * page, page);
    Mapping map = Mapping::Map(m);
    EXPECT_EQ(PolicyAt(map.data()).first, MPOL_DEFAULT);
    map.ApplyPolicy(MemPolicy::Make("r", policy, {0}), "r");
    auto [mode, nodes] = PolicyAt(map.data() + 3 * page);
    EXPECT_EQ(mode, *policy == 'b' ? MPOL_BIND : *policy == 'p' ? MPOL_PREFERRED : MPOL_INTERLEAVE);
    EXPECT_EQ(nodes, (IdSet{0}));
  }
}

INSTANTIATE_TEST_SUITE_P(Pages, MemPolicyOnMapping, ::testing::Values(4096, testing::k2M));

TEST(MemPolicy, NodeThatDoesNotExistIsAClearError) {
  if (!HaveNuma()) GTEST_SKIP() << "kernel without NUMA policy support";
  unsigned missing = 0;
  while (std::filesystem::exists("/sys/devices/system/node/node" + std::to_string(missing))) ++missing;
  Memfd m = Memfd::Create("nonode", 2 * kMiB, 4096);
  Mapping map = Mapping::Map(m);
  try {
    map.ApplyPolicy(MemPolicy::Make("memory 'x'", "bind", {missing}), "memory 'x'");
    FAIL() << "no error";
  } catch (const PreallocError& e) {
    EXPECT_EQ(std::string(e.what()), "memory 'x': cannot apply policy bind to host nodes " +
                                         std::to_string(missing) + ": host node " +
                                         std::to_string(missing) + " does not exist");
  }
}

}  // namespace
}  // namespace qlaunch::prealloc
