#include "qemu_cmd/caps_cache.h"
#include "qemu_cmd/kvm_device.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include <nlohmann/json.hpp>

#include "qemu_cmd/caps_probe.h"

namespace qlaunch::qemu {
namespace {

using qlaunch::testing::TempDir;

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kQemu = "/usr/bin/qemu-system-x86_64";

// The device the host is judged by: /dev/kvm, or $QLAUNCH_KVM_DEVICE (a test host without KVM).
bool HostKvmOpensReadWrite() {
  int fd = ::open(KvmDevicePath().c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// A QEMU "binary" of our own: a script that notes each run, then execs the real QEMU.
class CountingQemu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kQemu, X_OK) != 0) GTEST_SKIP() << kQemu << " is not installed (apt-get install qemu-system-x86)";
    script_ = dir_.path / "qemu-counting";
    runs_ = dir_.path / "runs";
    std::ofstream(script_) << "#!/bin/sh\necho run >> " << runs_.string() << "\nexec " << kQemu << " \"$@\"\n";
    fs::permissions(script_, fs::perms::owner_all);
    opts_.cache_dir = dir_.path / "cache";
  }
  int Runs() const {
    std::ifstream in(runs_);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  TempDir dir_;
  fs::path script_, runs_;
  ProbeOptions opts_;
};

TEST_F(CountingQemu, SecondProbeIsServedFromCache) {
  QemuCaps first = ProbeCaps(script_.string(), opts_);
  EXPECT_EQ(Runs(), 1);
  QemuCaps second = ProbeCaps(script_.string(), opts_);
  EXPECT_EQ(Runs(), 1) << "the second probe ran QEMU again";
  EXPECT_EQ(json(second), json(first));
  EXPECT_EQ(second.major, 7);
}

TEST_F(CountingQemu, CacheFileHoldsKeyAndCaps) {
  QemuCaps caps = ProbeCaps(script_.string(), opts_);
  auto key = MakeCapsCacheKey(script_.string());
  ASSERT_TRUE(key);
  fs::path file = CapsCacheFile(opts_.cache_dir, *key);
  EXPECT_EQ(file.parent_path(), opts_.cache_dir);
  EXPECT_EQ(file.filename().string().rfind("caps-", 0), 0u) << file;
  EXPECT_EQ(file.extension(), ".json");
  json j = json::parse(std::ifstream(file));
  EXPECT_EQ(j["key"]["path"], fs::canonical(script_).string());
  EXPECT_EQ(j["key"]["size"], fs::file_size(script_));
  EXPECT_EQ(j["key"]["mtime_ns"], key->mtime_ns);
  EXPECT_EQ(j["caps"]["version"]["major"], caps.major);
  EXPECT_EQ(j["caps"]["thread_context"], caps.thread_context);
  // Only the cache file: the temporary it was written through is gone.
  EXPECT_EQ(std::distance(fs::directory_iterator(opts_.cache_dir), fs::directory_iterator()), 1);
}

TEST_F(CountingQemu, TouchingTheBinaryInvalidates) {
  ProbeCaps(script_.string(), opts_);
  ASSERT_EQ(Runs(), 1);
  fs::last_write_time(script_, fs::last_write_time(script_) + 3s);
  ProbeCaps(script_.string(), opts_);
  EXPECT_EQ(Runs(), 2) << "a changed mtime must reprobe";
  ProbeCaps(script_.string(), opts_);
  EXPECT_EQ(Runs(), 2) << "and the new answer is cached again";
  // Same mtime but a different size also counts as another binary.
  auto mtime = fs::last_write_time(script_);
  std::ofstream(script_, std::ios::app) << "# grown\n";
  fs::last_write_time(script_, mtime);
  ProbeCaps(script_.string(), opts_);
  EXPECT_EQ(Runs(), 3);
}

TEST_F(CountingQemu, UseCacheFalseAlwaysProbesAndWritesNothing) {
  opts_.use_cache = false;
  ProbeCaps(script_.string(), opts_);
  ProbeCaps(script_.string(), opts_);
  EXPECT_EQ(Runs(), 2);
  EXPECT_FALSE(fs::exists(opts_.cache_dir));
}

TEST_F(CountingQemu, CorruptCacheFileIsReprobedAndRewritten) {
  ProbeCaps(script_.string(), opts_);
  fs::path file = CapsCacheFile(opts_.cache_dir, *MakeCapsCacheKey(script_.string()));
  std::ofstream(file) << "{ not json";
  QemuCaps caps = ProbeCaps(script_.string(), opts_);
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(json::parse(std::ifstream(file))["caps"]["version"]["major"], caps.major);
}

TEST_F(CountingQemu, BinaryIsReportedAsSpelledEvenFromCache) {
  fs::path link = dir_.path / "qemu-link";
  fs::create_symlink(script_, link);
  ProbeCaps(script_.string(), opts_);
  QemuCaps via_link = ProbeCaps(link.string(), opts_);
  EXPECT_EQ(Runs(), 1) << "the symlink resolves to the same cache entry";
  EXPECT_EQ(via_link.binary, link.string());
}

TEST(CapsCache, KvmIsDecidedOnTheHostAtLoad) {
  // A cached entry for a "binary" that would fail if it were run: ProbeCaps must answer
  // from the cache, and decide kvm from this host's /dev/kvm, not from the stored flag.
  TempDir dir;
  fs::path bin = dir.path / "not-qemu";
  std::ofstream(bin) << "#!/bin/sh\nexit 1\n";
  fs::permissions(bin, fs::perms::owner_all);
  auto key = MakeCapsCacheKey(bin.string());
  ASSERT_TRUE(key);
  CachedCaps entry;
  entry.caps.major = 9;
  entry.caps.minor = 1;
  entry.caps.memfd = true;
  entry.caps.kvm = !HostKvmOpensReadWrite();  // deliberately wrong
  entry.kvm_compiled = true;
  ASSERT_TRUE(StoreCachedCaps(dir.path / "cache", *key, entry));
  ProbeOptions o;
  o.cache_dir = dir.path / "cache";
  QemuCaps caps = ProbeCaps(bin.string(), o);
  EXPECT_EQ(caps.VersionString(), "9.1.0");
  EXPECT_TRUE(caps.memfd);
  EXPECT_EQ(caps.kvm, HostKvmOpensReadWrite());
  EXPECT_EQ(caps.binary, bin.string());

  entry.kvm_compiled = false;
  ASSERT_TRUE(StoreCachedCaps(dir.path / "cache", *key, entry));
  EXPECT_FALSE(ProbeCaps(bin.string(), o).kvm);
}

TEST(CapsCache, KeyOfMissingBinaryIsNone) {
  EXPECT_FALSE(MakeCapsCacheKey("/nonexistent/qlaunch/qemu"));
}

TEST(CapsCache, UnwritableDirectoryIsNotAnError) {
  TempDir dir;
  fs::path blocker = dir.path / "file";
  std::ofstream(blocker) << "x";
  CapsCacheKey key{"/x", 1, 2};
  EXPECT_FALSE(StoreCachedCaps(blocker / "cache", key, CachedCaps{}));
  EXPECT_FALSE(LoadCachedCaps(blocker / "cache", key));
}

TEST(CapsCache, StaleKeyIsNotLoaded) {
  TempDir dir;
  CapsCacheKey key{"/usr/bin/qemu-x", 100, 1234567890123};
  CachedCaps entry;
  entry.caps.major = 7;
  ASSERT_TRUE(StoreCachedCaps(dir.path, key, entry));
  ASSERT_TRUE(LoadCachedCaps(dir.path, key));
  EXPECT_EQ(LoadCachedCaps(dir.path, key)->caps.major, 7);
  CapsCacheKey newer = key;
  newer.mtime_ns += 1;
  EXPECT_EQ(CapsCacheFile(dir.path, newer), CapsCacheFile(dir.path, key)) << "one file per binary path";
  EXPECT_FALSE(LoadCachedCaps(dir.path, newer));
  CapsCacheKey bigger = key;
  bigger.size += 1;
  EXPECT_FALSE(LoadCachedCaps(dir.path, bigger));
}

class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name) : name_(name) {
    if (const char* v = getenv(name)) old_ = v;
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  void Set(const char* v) {
    if (v) ::setenv(name_, v, 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CapsCache, DefaultDirectoryFollowsEnvironment) {
  ScopedEnv q("QLAUNCH_CACHE_DIR"), x("XDG_CACHE_HOME"), h("HOME");
  q.Set("/q/cache");
  x.Set("/x/cache");
  h.Set("/home/someone");
  EXPECT_EQ(DefaultCapsCacheDir(), fs::path("/q/cache"));
  q.Set(nullptr);
  EXPECT_EQ(DefaultCapsCacheDir(), fs::path("/x/cache/qlaunch"));
  x.Set(nullptr);
  EXPECT_EQ(DefaultCapsCacheDir(), fs::path("/home/someone/.cache/qlaunch"));
}

}  // namespace
}  // namespace qlaunch::qemu
