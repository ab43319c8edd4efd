// qlaunch start --run-early on the real QEMU 7.2: the guest runs while qlaunch's workers fill its
// memory (as start --json reports it, and as seen from outside: a vCPU gaining CPU time while
// hugepages are still free, under KVM or TCG); refused, before anything exists, for memory that
// cannot be filled behind a running guest.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/notify_socket.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

class LaunchRunEarlyTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(LaunchRunEarlyTest, StartListDestroy) { StartListDestroy(kQemu72, {"--run-early"}, "launcher"); }

// The CPU time each vCPU thread of `pid` ("CPU n/KVM" or "CPU n/TCG") has run so far, in ns
// (/proc/TID/schedstat's first field; a guest's time inside KVM counts too). A paused vCPU waits
// on a futex and gains nothing; a running one gains its guest's time.
std::map<pid_t, uint64_t> VcpuRunNs(pid_t pid) {
  std::map<pid_t, uint64_t> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream comm(it->path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (!name.starts_with("CPU ") || !(name.ends_with("/KVM") || name.ends_with("/TCG"))) continue;
    std::ifstream st(it->path() / "schedstat");
    uint64_t ns = 0;
    if (st >> ns) out[std::stoi(it->path().filename().string())] = ns;
  }
  return out;
}

// Whether the guest of `pid` has run: a vCPU thread has gained more than 5 ms of CPU since it was
// first seen (`first`, filled in as threads appear). Setting a thread up and a kick while paused
// cost microseconds; a guest resumed in its firmware runs for seconds.
bool GuestRan(pid_t pid, std::map<pid_t, uint64_t>& first) {
  for (auto [tid, ns] : VcpuRunNs(pid)) {
    auto [it, fresh] = first.emplace(tid, ns);
    if (!fresh && ns - it->second > 5'000'000) return true;
  }
  return false;
}

// The order of the two moments in start --json: with --run-early the guest runs before its memory
// is full (or at the same time, for memory this small); without it, after. Both within total.
// And the same order seen from outside qlaunch: polling the QEMU process while `start` runs, the
// moment a vCPU has first run (KVM or TCG), how many of the host's hugepages are still free:
// with --run-early some of the guest's (its memory is being filled behind it), without it none.
TEST_F(LaunchRunEarlyTest, TimingsSayWhenTheGuestRanAndWhenItsMemoryWasFull) {
  SmallDomain d;
  d.cell_mib = 2048;  // 4 GiB: the workers are still filling when the guest is resumed, long enough to be seen
  HugepagePool pool = HugepagePool::AtLeast(d.Bytes() / (2u << 20) + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xml = WriteDomain(d);
  const uint64_t free_before = HugepagesFree();
  const uint64_t pages = d.Bytes() / (2u << 20);
  for (bool early : {true, false}) {
    SCOPED_TRACE(early ? "--run-early" : "default");
    std::vector<std::string> args = {"start", "--json", "--qemu", kQemu72, xml};
    if (early) args.insert(args.begin() + 1, "--run-early");
    RunningProcess start(args, BaseEnv());
    pid_t qemu = -1;
    std::map<pid_t, uint64_t> vcpu_first_ns;
    std::optional<uint64_t> free_when_running;
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!free_when_running && std::chrono::steady_clock::now() < until) {
      if (qemu < 0) {
        for (pid_t p : LivePidsWithCmdline("guest=" + d.name))
          if (p != start.pid()) qemu = p;
      } else if (GuestRan(qemu, vcpu_first_ns)) {
        free_when_running = HugepagesFree();
      } else if (PidGone(qemu)) {
        break;
      }
      ::usleep(500);
    }
    RunResult r = start.Wait();
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    const uint64_t free_after = HugepagesFree();
    ASSERT_TRUE(free_when_running.has_value()) << "never saw a vCPU of QEMU " << qemu << " run";
    std::printf("[ outside  ] %s: %llu of the guest's %llu pages still free when a vCPU first ran\n",
                early ? "--run-early" : "default", static_cast<unsigned long long>(*free_when_running - free_after),
                static_cast<unsigned long long>(pages));
    if (early) {
      EXPECT_GT(*free_when_running, free_after) << "the guest ran only once its memory was full";
    } else {
      EXPECT_EQ(*free_when_running, free_after) << "the guest ran before its memory was full";
    }
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["run_early"], early);
    EXPECT_EQ(j["prealloc"], "launcher");
    const nlohmann::json& t = j["timings_ms"];
    const double running = t["running"], populated = t["populated"], total = t["total"];
    std::printf("[ timings  ] %s: running %.1f ms, populated %.1f ms, total %.1f ms\n",
                early ? "--run-early" : "default", running, populated, total);
    EXPECT_GT(running, 0.0);
    EXPECT_GT(populated, 0.0);
    EXPECT_LE(running, total);
    EXPECT_LE(populated, total + 0.01);
    if (early) {
      EXPECT_LE(running, populated);
    } else {
      EXPECT_LE(populated, running);
    }
    // Every page is in and belongs to the guest's memfds, held by QEMU alone.
    EXPECT_EQ(free_before - free_after, pages);
    const pid_t pid = j["pid"];
    if (qemu > 0) {
      EXPECT_EQ(pid, qemu);
    }
    EXPECT_EQ(PidsHoldingFd("memfd:qlaunch:" + d.name + ":"), std::vector<pid_t>{pid});
    RunResult list = Qlaunch({"list", "--json"});
    EXPECT_NE(list.out.find("\"running\""), std::string::npos) << list.Describe();
    RunResult destroy = Qlaunch({"destroy", d.name});
    ASSERT_EQ(destroy.exit_code, 0) << destroy.Describe();
    ExpectHostClean(d.name, pid, free_before);
  }
}

// run --run-early: the same start under the supervisor. READY=1 on $NOTIFY_SOCKET comes once the
// memory is full (every page of the guest taken when it arrives), the start report says the guest
// ran first, and SIGTERM (--shutdown-timeout 0) destroys it and gives every page back.
TEST_F(LaunchRunEarlyTest, RunSendsReadyOnceTheMemoryIsFull) {
  SmallDomain d;
  d.cell_mib = 1024;
  HugepagePool pool = HugepagePool::AtLeast(d.Bytes() / (2u << 20) + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xml = WriteDomain(d);
  const uint64_t free_before = HugepagesFree();
  const uint64_t pages = d.Bytes() / (2u << 20);
  NotifySocket notify((tmp() / "notify.sock").string());
  ASSERT_TRUE(notify.ok());
  Env env = BaseEnv();
  env["NOTIFY_SOCKET"] = notify.path();
  RunningProcess run({QlaunchBinary(), "run", "--json", "--run-early", "--shutdown-timeout", "0", "--qemu", kQemu72, xml},
                     env);
  const std::string ready = notify.Receive(std::chrono::seconds(60));
  const uint64_t free_at_ready = HugepagesFree();
  ASSERT_FALSE(ready.empty()) << "no readiness message; stderr so far:\n" << run.ErrSoFar();
  EXPECT_TRUE(ready.starts_with("READY=1\n")) << ready;
  EXPECT_EQ(free_before - free_at_ready, pages) << "READY=1 came before the guest's memory was full";
  ::kill(run.pid(), SIGTERM);
  RunResult r = run.Wait();
  EXPECT_EQ(r.exit_code, 4) << r.Describe();
  std::optional<nlohmann::json> report;
  std::istringstream lines(r.err);
  for (std::string line; !report && std::getline(lines, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("timings_ms")) report = j;
  }
  ASSERT_TRUE(report.has_value()) << r.Describe();
  EXPECT_EQ((*report)["run_early"], true);
  EXPECT_LE((*report)["timings_ms"]["running"].get<double>(), (*report)["timings_ms"]["populated"].get<double>());
  ExpectHostClean(d.name, (*report)["pid"].get<pid_t>(), free_before);
}

// Memory that QEMU fills, 4 KiB pages and <locked/> cannot run early: exit 1 naming the file, the
// line and the reason, and nothing is created.
TEST_F(LaunchRunEarlyTest, RefusedWithTheReasonBeforeAnythingExists) {
  SmallDomain d;
  HugepagePool pool = HugepagePool::AtLeast(d.Bytes() / (2u << 20) + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  struct Case {
    const char* name;
    std::vector<std::string> flags;
    SmallDomain domain;
    const char* want;
  };
  SmallDomain priv = d;
  priv.access = "private";
  const Case cases[] = {
      {"--prealloc qemu", {"--prealloc", "qemu"}, d, "memory backend ram-node0 is preallocated by QEMU"},
      {"private memory", {}, priv, "memory backend ram-node0 is preallocated by QEMU, which finishes before the guest can run (private memfd"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string xml = WriteDomain(c.domain);
    std::vector<std::string> args = {"start", "--run-early", "--qemu", kQemu72};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    args.push_back(xml);
    RunResult r = Qlaunch(args);
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(xml + ":"), std::string::npos) << r.Describe();
    EXPECT_NE(r.err.find("--run-early: " + std::string(c.want)), std::string::npos) << r.Describe();
    EXPECT_EQ(r.out, "");
    ExpectNothingLeft(c.domain.name, free_before);
  }
}

// A failure while the guest runs and its memory is still being filled (QLAUNCH_FAULT=running)
// leaves nothing behind either: QEMU killed, memfds closed, every page back, no state.
TEST_F(LaunchRunEarlyTest, FailureWhileTheGuestRunsLeavesNothing) {
  SmallDomain d;
  HugepagePool pool = HugepagePool::AtLeast(d.Bytes() / (2u << 20) + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  RunResult r = Qlaunch({"start", "--run-early", "--qemu", kQemu72, WriteDomain(d)}, {{"QLAUNCH_FAULT", "running"}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("fault injected at phase running"), std::string::npos) << r.Describe();
  ExpectNothingLeft(d.name, free_before);
}

}  // namespace
}  // namespace qlaunch::testing
