#include "launcher/lifecycle/start/warm_target.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

namespace qlaunch::launcher {
namespace {

constexpr uint64_t k2M = 2ull << 20, k1G = 1ull << 30;

ShapedBackend B(uint64_t page, unsigned node, uint64_t bytes) { return {"m", WarmShape{page, node, bytes}, 0}; }

TEST(WarmTargetTest, SetsInCountsWholeSetsOnly) {
  const std::vector<ShapedBackend> two_cells{B(k2M, 0, 64 << 20), B(k2M, 1, 64 << 20)};
  struct Case {
    std::map<WarmKey, unsigned> files;
    unsigned sets;
  } cases[] = {
      {{}, 0},
      {{{{k2M, 0, 64 << 20}, 3}}, 0},  // node 1 has none
      {{{{k2M, 0, 64 << 20}, 3}, {{k2M, 1, 64 << 20}, 2}}, 2},
      {{{{k2M, 0, 64 << 20}, 1}, {{k2M, 1, 128 << 20}, 5}}, 0},  // other size: not this set's
      {{{{k1G, 0, 64 << 20}, 4}, {{k2M, 1, 64 << 20}, 4}}, 0},   // other page size
  };
  for (const auto& c : cases) EXPECT_EQ(SetsIn(two_cells, c.files), c.sets);
  // Two backends of one shape in a set take two files each set.
  const std::vector<ShapedBackend> twins{B(k2M, 0, 64 << 20), B(k2M, 0, 64 << 20)};
  EXPECT_EQ(SetsIn(twins, {{{k2M, 0, 64 << 20}, 5}}), 2u);
  EXPECT_EQ(SetsIn({}, {{{k2M, 0, 64 << 20}, 5}}), 0u);
}

TEST(WarmTargetTest, SavedTargetsLoadBackAndCountZeroRemoves) {
  char tmpl[] = "/tmp/qlaunch-warm-target-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path root = tmpl;
  ::setenv(kPoolTargetsEnv, root.c_str(), 1);
  ::setenv(kPoolDirEnv, "pool-a", 1);
  EXPECT_EQ(PoolTargetsDir(), root / "pool-a");
  EXPECT_FALSE(AnyWarmTarget());
  SaveWarmTarget({"b-dom", 2, "/usr/bin/qemu-system-x86_64", "launcher", "<domain/>"});
  SaveWarmTarget({"a-dom", 1, "", "auto", "<domain type='kvm'/>"});
  std::vector<WarmTarget> t = LoadWarmTargets();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].domain, "a-dom");
  EXPECT_EQ(t[1].domain, "b-dom");
  EXPECT_EQ(t[1].count, 2u);
  EXPECT_EQ(t[1].qemu, "/usr/bin/qemu-system-x86_64");
  EXPECT_EQ(t[1].prealloc, "launcher");
  EXPECT_EQ(t[0].xml, "<domain type='kvm'/>");
  SaveWarmTarget({"b-dom", 5, "", "auto", "<domain/>"});  // replaced whole
  EXPECT_EQ(LoadWarmTargets()[1].count, 5u);
  EXPECT_THROW(SaveWarmTarget({"../x", 1, "", "auto", "<domain/>"}), std::runtime_error);
  SaveWarmTarget({"a-dom", 0, "", "auto", ""});
  SaveWarmTarget({"b-dom", 0, "", "auto", ""});
  EXPECT_FALSE(AnyWarmTarget());
  EXPECT_FALSE(std::filesystem::exists(root / "pool-a")) << "the empty directory goes";
  ::unsetenv(kPoolTargetsEnv);
  ::unsetenv(kPoolDirEnv);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace qlaunch::launcher
