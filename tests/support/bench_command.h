// The ground of the `qlaunch bench` tests (tests/bench_command*_test.cc): a small domain on real
// hugepages, the bench run as a command, its report's per-starter checks, and the host as it was
// found afterwards.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/launch_env.h"
#include "support/libvirt.h"

namespace qlaunch::testing {

// The bench's private directories (<tmp>/qlaunch-bench-*) that exist now.
inline std::set<std::string> BenchDirs() {
  std::set<std::string> out;
  std::error_code ec;
  using It = std::filesystem::directory_iterator;
  for (It it(std::filesystem::temp_directory_path(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("qlaunch-bench-", 0) == 0) out.insert(it->path().string());
  return out;
}

class BenchCommandTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    if (DefaultHugepageBytes() != (2u << 20)) GTEST_SKIP() << "these tests assume 2 MiB default hugepages";
    dom_.name = "qlaunch-bench-it";
    dom_.cells = 1;
    dom_.cell_mib = 64;
    dirs_before_ = BenchDirs();
  }

  // The pool holds the domain and a few pages more; "" when it does, else why the test skips.
  std::string ReservePool() {
    pool_.emplace(HugepagePool::AtLeast(dom_.Bytes() / (2u << 20) + 8));
    if (!pool_->ok()) return pool_->error();
    free_before_ = HugepagesFree();
    return "";
  }

  // The small domain, written out as libvirt accepts it too: libvirt checks a custom CPU model
  // against the host's (qemu64 wants svm, which the host's KVM may not offer) unless asked not to,
  // as scripts/bench does.
  std::string WriteBenchDomain() {
    std::string xml = SmallDomainXml(dom_);
    const std::string cpu = "<cpu mode='custom'>";
    xml.replace(xml.find(cpu), cpu.size(), "<cpu mode='custom' match='exact' check='none'>");
    const std::filesystem::path path = tmp() / (dom_.name + ".xml");
    std::ofstream(path) << xml;
    return path.string();
  }

  RunResult Bench(std::vector<std::string> args, const Env& env = {}) {
    args.insert(args.begin(), "bench");
    return Qlaunch(args, env, std::chrono::minutes(5));
  }

  // No domain (under qlaunch or libvirt), no QEMU, every hugepage free, no bench directory.
  void ExpectHostAsFound() {
    RunResult list = Qlaunch({"list", "--json"});
    EXPECT_EQ(list.out, "[]\n") << list.Describe();
    ExpectNothingLeft(dom_.name, free_before_);
    EXPECT_EQ(LivePidsWithCmdline("guest=" + dom_.name), std::vector<pid_t>{}) << "a QEMU of the domain still runs";
    if (LibvirtUnreachable().empty()) {
      RunResult state = RunningProcess({"/usr/bin/virsh", "-c", "qemu:///system", "domstate", dom_.name}, {}).Wait();
      EXPECT_NE(state.exit_code, 0) << "libvirt still knows the domain: " << state.Describe();
    }
    EXPECT_EQ(BenchDirs(), dirs_before_) << "the bench left its temporary directory";
  }

  SmallDomain dom_;
  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
  std::set<std::string> dirs_before_;
};

inline double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline void ExpectStarter(const nlohmann::json& report, const std::string& name, size_t runs) {
  SCOPED_TRACE(name);
  ASSERT_TRUE(report["starters"].contains(name)) << report.dump(2);
  const nlohmann::json& s = report["starters"][name];
  ASSERT_TRUE(s["runs_ms"].is_array()) << s.dump();
  ASSERT_EQ(s["runs_ms"].size(), runs) << s.dump();
  std::vector<double> ms = s["runs_ms"].get<std::vector<double>>();
  for (double m : ms) EXPECT_GT(m, 0.0) << s.dump();
  EXPECT_GT(s["warmup_ms"].get<double>(), 0.0) << s.dump();
  EXPECT_DOUBLE_EQ(s["min"].get<double>(), *std::min_element(ms.begin(), ms.end())) << s.dump();
  EXPECT_DOUBLE_EQ(s["max"].get<double>(), *std::max_element(ms.begin(), ms.end())) << s.dump();
  EXPECT_LE(s["min"].get<double>(), s["median"].get<double>()) << s.dump();
  EXPECT_LE(s["median"].get<double>(), s["max"].get<double>()) << s.dump();
  // The median, recomputed here from the starter's own runs (the report rounds to 0.001 ms).
  EXPECT_NEAR(s["median"].get<double>(), MedianOf(ms), 0.001) << s.dump();
  // Each run is the time between the two clock readings the report gives for it.
  ASSERT_TRUE(s["runs_clock_ns"].is_array()) << s.dump();
  ASSERT_EQ(s["runs_clock_ns"].size(), runs) << s.dump();
  for (size_t i = 0; i < runs; ++i) {
    const int64_t start = s["runs_clock_ns"][i][0].get<int64_t>(), stop = s["runs_clock_ns"][i][1].get<int64_t>();
    EXPECT_LT(start, stop) << s.dump();
    EXPECT_NEAR(ms[i], (stop - start) / 1e6, 0.0005 + 1e-9) << s.dump();
  }
}

}  // namespace qlaunch::testing
