// The warm pool's names and state machine (warm_pool.h) on a directory of ordinary files: renames,
// flocks and leases behave alike on hugetlbfs (tests/warm_pool_test.cc runs them there, with pages).
#include "launcher/host/warm_pool.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <filesystem>
#include <set>

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

TEST(WarmName, FormatsAndParsesBack) {
  const WarmName n{WarmState::kDirty, 3, 1073741824, "18ee-42-7"};
  EXPECT_EQ(FormatWarmName(n), "dirty.n3.1073741824.18ee-42-7");
  std::optional<WarmName> back = ParseWarmName(FormatWarmName(n));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->state, WarmState::kDirty);
  EXPECT_EQ(back->node, 3u);
  EXPECT_EQ(back->bytes, 1073741824u);
  EXPECT_EQ(back->serial, "18ee-42-7");
  for (WarmState s : {WarmState::kFill, WarmState::kWarm, WarmState::kUse, WarmState::kScrub})
    EXPECT_EQ(ParseWarmName(FormatWarmName({s, 0, 2097152, "a"}))->state, s);
}

TEST(WarmName, RefusesWhatIsNotOne) {
  for (const char* bad : {"", "warm", "warm.n0", "warm.n0.2097152", "warm.n0.2097152.", "hot.n0.2097152.a",
                          "warm.0.2097152.a", "warm.nx.2097152.a", "warm.n0.0.a", "warm.n0.-5.a", "warm.n0.2097152.a/b",
                          "warm.n0.2097152.a.b", "warm.n99999.2097152.a", "warm.n0.99999999999999999999.a"})
    EXPECT_FALSE(ParseWarmName(bad)) << bad;
}

class PoolDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qlaunch-warm-unit-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_.emplace(root_ / "pool");
    dir_->Create();
  }
  void TearDown() override { fs::remove_all(root_); }
  std::multiset<std::string> States() const {
    std::multiset<std::string> out;
    for (const WarmEntry& e : dir_->List()) out.insert(std::string(ToString(e.name.state)) + ":" + std::to_string(e.name.bytes));
    return out;
  }
  void Warm(unsigned node, uint64_t bytes) {
    HeldFile f = dir_->CreateFill(node, bytes);
    dir_->MarkWarm(&f);
  }
  fs::path root_;
  std::optional<PoolDir> dir_;
};

TEST_F(PoolDirTest, DirectoryIsRootOnly) {
  EXPECT_EQ(fs::status(dir_->path()).permissions(), fs::perms::owner_all);
}

TEST_F(PoolDirTest, ClaimTakesTheSmallestMatchOnItsNodeAndCutsItDown) {
  Warm(0, 8 << 20);
  Warm(0, 4 << 20);
  Warm(1, 2 << 20);
  EXPECT_FALSE(dir_->Claim(0, 16 << 20)) << "none large enough";
  EXPECT_FALSE(dir_->Claim(2, 2 << 20)) << "none on node 2";
  std::optional<HeldFile> f = dir_->Claim(0, 2 << 20);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->name.state, WarmState::kUse);
  EXPECT_EQ(f->name.bytes, 2u << 20);
  EXPECT_EQ(fs::file_size(f->path), 2u << 20) << "the rest given back";
  EXPECT_EQ(States(), (std::multiset<std::string>{"warm:8388608", "use:2097152", "warm:2097152"}));
}

TEST_F(PoolDirTest, OneWarmFileGoesToOneClaimant) {
  Warm(0, 2 << 20);
  std::optional<HeldFile> a = dir_->Claim(0, 2 << 20);
  std::optional<HeldFile> b = dir_->Claim(0, 2 << 20);
  EXPECT_TRUE(a);
  EXPECT_FALSE(b);
}

TEST_F(PoolDirTest, DomainEndMakesItsFilesDirtyAndScrubTakesThemOnlyWhenNobodyHoldsThem) {
  Warm(0, 2 << 20);
  std::optional<HeldFile> used = dir_->Claim(0, 2 << 20);
  ASSERT_TRUE(used);
  EXPECT_FALSE(dir_->TakeDirty()) << "nothing dirty yet";
  const fs::path record = root_ / "pool-record";
  { std::ofstream(record) << used->path.string() << "\n" << "/nonexistent/use.n0.1.x\n"; }
  ReleaseDomainWarmFiles(record);  // a test binary: no scrubber is started
  EXPECT_EQ(States(), (std::multiset<std::string>{"dirty:2097152"}));
  // `used` still holds it open (as a QEMU not yet gone would): never scrubbed then.
  EXPECT_FALSE(dir_->TakeDirty());
  used.reset();
  std::optional<HeldFile> s = dir_->TakeDirty();
  ASSERT_TRUE(s);
  EXPECT_EQ(States(), (std::multiset<std::string>{"scrub:2097152"}));
  dir_->MarkWarm(&*s);
  EXPECT_EQ(States(), (std::multiset<std::string>{"warm:2097152"}));
}

TEST_F(PoolDirTest, WhatAKilledWorkerLeftIsNeverWarm) {
  Warm(0, 2 << 20);
  {
    std::optional<HeldFile> used = dir_->Claim(0, 2 << 20);
    const fs::path record = root_ / "pool-record";
    std::ofstream(record) << used->path.string() << "\n";
    used.reset();
    ReleaseDomainWarmFiles(record);
  }
  std::optional<HeldFile> scrubbing = dir_->TakeDirty();
  HeldFile filling = dir_->CreateFill(0, 2 << 20);
  EXPECT_EQ(dir_->RecoverStale(), 0u) << "their workers live (they hold the flocks)";
  EXPECT_EQ(States(), (std::multiset<std::string>{"scrub:2097152", "fill:2097152"}));
  scrubbing.reset();  // as a kill -9 would: the flock goes with the process
  filling.fd.Reset();
  EXPECT_EQ(dir_->RecoverStale(), 2u);
  EXPECT_EQ(States(), (std::multiset<std::string>{"dirty:2097152"})) << "scrubbed again; the half fill given back";
  EXPECT_FALSE(dir_->Claim(0, 2 << 20));
}

TEST_F(PoolDirTest, DrainLeavesFilesInUse) {
  Warm(0, 2 << 20);
  Warm(0, 2 << 20);
  std::optional<HeldFile> used = dir_->Claim(0, 2 << 20);
  EXPECT_EQ(dir_->Drain().size(), 1u);
  EXPECT_EQ(States(), (std::multiset<std::string>{"use:2097152"}));
}

TEST(PoolDirName, EnvNamesADirectoryNotAPath) {
  ::unsetenv(kPoolDirEnv);
  EXPECT_EQ(PoolDirName(), "qlaunch-pool");
  ::setenv(kPoolDirEnv, "mine", 1);
  EXPECT_EQ(PoolDirName(), "mine");
  ::setenv(kPoolDirEnv, "../x", 1);
  EXPECT_THROW(PoolDirName(), std::runtime_error);
  ::unsetenv(kPoolDirEnv);
}

}  // namespace
}  // namespace qlaunch::launcher
