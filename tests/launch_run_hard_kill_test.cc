// No VM outlives its supervisor: `qlaunch run` killed outright (SIGKILL: a scheduler after its
// grace time, the OOM killer) takes its QEMU with it (the kernel's parent-death signal, set in
// the child after the privilege drop), and the next qlaunch command releases what the domain
// held (state, pages). A SIGTERM sent to the whole process tree, as Slurm's process tracking
// does, reaches only qlaunch: the guest gets its ACPI shutdown, QEMU itself ignores the signal.
// Real QEMU 7.2, real hugepages.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <fstream>
#include <thread>

#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class LaunchRunHardKillTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  }

  std::unique_ptr<RunningProcess> Run(const std::string& xml, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> argv = {QlaunchBinary(), "run", "--json"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(xml);
    return std::make_unique<RunningProcess>(argv, BaseEnv());
  }

  // The QEMU pid once `qlaunch list` shows the domain running; 0 on timeout (0 ms: asked once).
  pid_t WaitRunning(const std::string& name, milliseconds limit = std::chrono::seconds(60)) {
    const auto deadline = Clock::now() + limit;
    for (bool first = true; first || Clock::now() < deadline; first = false) {
      nlohmann::json all = nlohmann::json::parse(Qlaunch({"list", "--json"}).out, nullptr, false);
      if (all.is_array())
        for (const auto& e : all)
          if (e.value("name", "") == name && e.value("state", "") == "running" && e["pid"].is_number())
            return e["pid"].get<pid_t>();
      std::this_thread::sleep_for(milliseconds(50));
    }
    return 0;
  }

  // Seconds until every process this test adopted (QEMU, re-parented to us as subreaper when
  // its qlaunch died) has exited, and the domain's QEMU, if one was recorded, is gone with all
  // its threads (a dying QEMU is a zombie while its memory is still being torn down); -1 after
  // `limit`.
  double SecondsUntilQemuGone(const std::string& name, milliseconds limit) {
    const auto t0 = Clock::now();
    while (Clock::now() - t0 < limit) {
      pid_t qemu = 0;
      std::ifstream(DomainStateDir(name) / "pid") >> qemu;
      if (LiveChildren().empty() && (qemu <= 0 || PidGone(qemu)))
        return std::chrono::duration<double>(Clock::now() - t0).count();
      std::this_thread::sleep_for(milliseconds(5));
    }
    return -1;
  }
};

// kill -9 of a running `qlaunch run`: QEMU is gone within a second or two; the next `list`
// removes the state; every hugepage is back.
TEST_F(LaunchRunHardKillTest, KillNineOfRunTakesItsQemuWithIt) {
  SmallDomain d;
  d.name = "hard-kill";
  HugepagePool pool = HugepagePool::AtLeast(d.Bytes() / DefaultHugepageBytes() + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xml = WriteDomain(d);
  const uint64_t free_before = HugepagesFree();
  for (const char* mode : {"launcher", "qemu"}) {
    SCOPED_TRACE(std::string("--prealloc ") + mode);
    auto run = Run(xml, {"--prealloc", mode});
    const pid_t qemu = WaitRunning(d.name);
    ASSERT_GT(qemu, 0) << run->Wait(milliseconds(1)).Describe();
    EXPECT_EQ(free_before - HugepagesFree(), d.Bytes() / DefaultHugepageBytes());
    const auto t0 = Clock::now();
    ASSERT_EQ(::kill(run->pid(), SIGKILL), 0);
    RunResult r = run->Wait(std::chrono::seconds(10));
    EXPECT_EQ(r.signal, SIGKILL) << r.Describe();
    double gone = -1;
    for (int i = 0; i < 400 && gone < 0; ++i) {
      if (PidGone(qemu)) gone = std::chrono::duration<double>(Clock::now() - t0).count();
      else std::this_thread::sleep_for(milliseconds(5));
    }
    ASSERT_GE(gone, 0) << "QEMU pid " << qemu << " still runs 2 s after its qlaunch run was killed";
    std::printf("figure: --prealloc %s: QEMU gone %.3f s after kill -9 of qlaunch run\n", mode, gone);
    RecordProperty(std::string("qemu_gone_after_kill9_s_") + mode, std::to_string(gone));
    EXPECT_LT(gone, 2.0);
    // The state is still there (nobody ran its cleanup) until the next command clears it.
    EXPECT_TRUE(fs::exists(DomainStateDir(d.name)));
    RunResult list = Qlaunch({"list", "--json"});
    EXPECT_EQ(list.exit_code, 0) << list.Describe();
    EXPECT_EQ(nlohmann::json::parse(list.out), nlohmann::json::array()) << list.Describe();
    ExpectHostClean(d.name, qemu, free_before);
    ExpectNothingLeft(d.name, free_before);
  }
}

// kill -9 of `qlaunch run` at each moment of its start, each reached by watching for it rather
// than after a fixed delay: at once (nothing done yet), while the launcher fills the guest's
// memory (some of its pages taken, not all), once QEMU is spawned (its pid recorded), once it
// runs. Where each kill really landed is recorded (printed and as a test property): no QEMU
// survives any of them, and the next command leaves nothing.
TEST_F(LaunchRunHardKillTest, KillNineDuringTheStartLeavesNoQemu) {
  SmallDomain d;
  d.name = "hard-kill-start";
  d.cell_mib = 512;  // 1 GiB: the fill takes a while
  HugepagePool pool = HugepagePool::AtLeast(d.Bytes() / DefaultHugepageBytes() + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xml = WriteDomain(d);
  const uint64_t free_before = HugepagesFree();
  const uint64_t pages = d.Bytes() / DefaultHugepageBytes();
  ASSERT_EQ(Qlaunch({"validate", xml}).exit_code, 0);  // warms the capability cache
  const fs::path pid_file = DomainStateDir(d.name) / "pid";
  // What the start had done when the kill was sent.
  auto landed = [&] {
    const uint64_t taken = free_before - std::min(free_before, HugepagesFree());
    if (fs::exists(pid_file)) return std::string(WaitRunning(d.name, milliseconds(0)) ? "running" : "spawned");
    if (taken == 0) return std::string("nothing done");
    return taken < pages ? std::string("filling") : std::string("filled");
  };
  struct Moment {
    const char* name;
    std::function<bool()> reached;  // polled until true (or 30 s)
  };
  const Moment moments[] = {
      {"at once", [] { return true; }},
      {"during the fill",
       [&] {
         const uint64_t taken = free_before - std::min(free_before, HugepagesFree());
         return taken > 0;
       }},
      {"once spawned", [&] { return fs::exists(pid_file); }},
      {"once running", [&] { return WaitRunning(d.name, milliseconds(0)) != 0; }},
  };
  std::string record;
  for (const Moment& m : moments) {
    SCOPED_TRACE(std::string("kill -9 ") + m.name);
    auto run = Run(xml, {"--prealloc", "launcher"});
    for (const auto deadline = Clock::now() + std::chrono::seconds(30); !m.reached() && Clock::now() < deadline;)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    const std::string where = landed();
    ::kill(run->pid(), SIGKILL);
    run->Wait(std::chrono::seconds(10));
    std::printf("figure: kill -9 %s landed: %s\n", m.name, where.c_str());
    record += std::string(record.empty() ? "" : "; ") + m.name + ": " + where;
    if (std::string(m.name) == "at once") {
      EXPECT_EQ(where, "nothing done");
    }
    if (std::string(m.name) == "once running") {
      EXPECT_EQ(where, "running");
    }
    double gone = SecondsUntilQemuGone(d.name, milliseconds(3000));
    EXPECT_GE(gone, 0) << "a QEMU outlived its killed qlaunch run";
    EXPECT_LT(gone, 2.0);
    EXPECT_EQ(Qlaunch({"list", "--json"}).out, "[]\n");
    ExpectNothingLeft(d.name, free_before);
  }
  RecordProperty("kill_moments", record);
}

// SIGTERM to every process of the run (qlaunch and QEMU), as Slurm's proctrack/linuxproc signals
// a job's process tree on scancel: QEMU does not die of it; qlaunch presses the ACPI button, and
// this guest (SeaBIOS alone) ignores it, so qlaunch destroys it after --shutdown-timeout: exit 4,
// not 5 (QEMU ended by itself).
TEST_F(LaunchRunHardKillTest, SigtermToTheWholeTreeReachesOnlyTheSupervisor) {
  const fs::path xml = tmp() / "tree.xml";
  std::ofstream(xml) << "<domain type='qemu'>\n  <name>tree</name>\n  <memory unit='MiB'>64</memory>\n"
                     << "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n"
                     << "  <features><acpi/></features>\n  <devices>\n    <emulator>" << kQemu72
                     << "</emulator>\n    <memballoon model='none'/>\n  </devices>\n</domain>\n";
  auto run = Run(xml.string(), {"--shutdown-timeout", "2"});
  const pid_t qemu = WaitRunning("tree");
  ASSERT_GT(qemu, 0) << run->Wait(milliseconds(1)).Describe();
  std::string status = ProcStatus(qemu)["SigBlk"];
  ::kill(qemu, SIGTERM);
  ::kill(run->pid(), SIGTERM);
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE(PidGone(qemu)) << "QEMU died of the SIGTERM meant for the job (SigBlk " << status << ")";
  RunResult r = run->Wait(std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 4) << r.Describe();
  EXPECT_NE(r.err.find("ACPI power button"), std::string::npos) << "no ACPI shutdown was tried\n" << r.Describe();
  ExpectHostClean("tree", qemu, HugepagesFree());
}

}  // namespace
}  // namespace qlaunch::testing
