// qlaunch start failing on real QEMU 7.2, and what it leaves behind: nothing. Each test checks
// the exit code, the message, and the host afterwards (processes, memfds, free hugepages,
// state directory).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class LaunchFailureTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    if (DefaultHugepageBytes() != (2u << 20)) GTEST_SKIP() << "these tests assume 2 MiB default hugepages";
  }

  // A domain whose preallocation takes a while (2 GiB in two cells), written out, with a pool
  // that holds it and a few pages more for the rest of the test. "" when ready, else why the
  // test must skip.
  std::string PrepareSlowDomain(const std::string& name) {
    slow_.name = name;
    slow_.cell_mib = 1024;
    slow_pages_ = slow_.Bytes() / (2u << 20);
    slow_pool_.emplace(HugepagePool::AtLeast(slow_pages_ + 8));
    if (!slow_pool_->ok()) return slow_pool_->error();
    free_before_ = HugepagesFree();
    slow_xml_ = WriteDomain(slow_);
    return "";
  }
  SmallDomain slow_;
  uint64_t slow_pages_ = 0;
  uint64_t free_before_ = 0;
  std::string slow_xml_;
  std::optional<HugepagePool> slow_pool_;

  // Starts `args` in the background, waits until its memory starts to be populated (the free
  // pool shrinks) and, when `after_file` is given, until that file exists too, then sends `sig`.
  // Returns the result; *sent tells whether the signal went out before qlaunch had finished.
  RunResult InterruptWhilePopulating(const std::vector<std::string>& args, uint64_t free_before, bool* sent,
                                     int sig = SIGINT, const fs::path& after_file = {}) {
    std::vector<std::string> argv = {QlaunchBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunningProcess p(argv, BaseEnv());
    *sent = false;
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline && !PidGone(p.pid())) {
      if (HugepagesFree() < free_before && (after_file.empty() || fs::exists(after_file))) {
        *sent = ::kill(p.pid(), sig) == 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return p.Wait(std::chrono::seconds(60));
  }

  // Waits until `pid` has a handler for both SIGINT and SIGTERM (SigCgt in /proc/PID/status:
  // qlaunch's start has begun); false if it ended or 60 s passed first. Moments measured from
  // here hold on a slow machine too (an ASan qlaunch takes a few hundred ms to reach main).
  static bool WaitUntilCatchingIntAndTerm(pid_t pid) {
    const uint64_t both = (uint64_t{1} << (SIGINT - 1)) | (uint64_t{1} << (SIGTERM - 1));
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline && !PidGone(pid)) {
      auto status = ProcStatus(pid);
      if (auto it = status.find("SigCgt"); it != status.end() && (std::stoull(it->second, nullptr, 16) & both) == both)
        return true;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return false;
  }
};

TEST_F(LaunchFailureTest, PoolTooSmallFailsBeforeSpawning) {
  SmallDomain d;  // needs 64 pages
  HugepagePool pool = HugepagePool::Exactly(10);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xml = WriteDomain(d);
  for (const char* mode : {"auto", "launcher"}) {
    RunResult r = Qlaunch({"start", "--prealloc", mode, xml});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("not enough 2 MiB hugepages on host node 0: the domain needs 64, 10 are free"),
              std::string::npos)
        << r.Describe();
    EXPECT_EQ(r.out, "");
    ExpectNothingLeft(d.name, 10);
    EXPECT_FALSE(fs::exists(DomainStateDir(d.name)));
  }
}

TEST_F(LaunchFailureTest, WrongEmulatorPathIsNamed) {
  SmallDomain d;
  HugepagePool pool = HugepagePool::AtLeast(72);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string missing = (tmp() / "no-such-qemu").string();

  RunResult r = Qlaunch({"start", "--qemu", missing, WriteDomain(d)});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("emulator " + missing + " (given by --qemu) does not exist"), std::string::npos)
      << r.Describe();
  ExpectNothingLeft(d.name, free_before);

  d.emulator = missing;  // from the XML: the message points at the <emulator> line
  const std::string xml = WriteDomain(d);
  r = Qlaunch({"start", xml});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(xml + ":"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("<emulator>: emulator " + missing + " does not exist"), std::string::npos) << r.Describe();
  ExpectNothingLeft(d.name, free_before);
}

TEST_F(LaunchFailureTest, QemuExitingDuringStartShowsItsLog) {
  SmallDomain d;
  d.machine = "no-such-machine";
  HugepagePool pool = HugepagePool::AtLeast(72);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string xml = WriteDomain(d);
  for (const char* mode : {"qemu", "launcher"}) {
    RunResult r = Qlaunch({"start", "--prealloc", mode, xml});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("QEMU exited with status 1 while starting domain " + d.name), std::string::npos)
        << r.Describe();
    EXPECT_NE(r.err.find("qemu.log:\n"), std::string::npos) << r.Describe();
    EXPECT_NE(r.err.find("unsupported machine type"), std::string::npos) << "the log's tail\n" << r.Describe();
    ExpectNothingLeft(d.name, free_before);
  }
}

TEST_F(LaunchFailureTest, QmpThatNeverAnswersTimesOut) {
  // A fake emulator: the capability probe (-machine none) gets the real QEMU; the launch gets
  // a process that records its pid and sleeps without ever opening the QMP socket.
  // QEMU runs as ids of its own: the fake must be executable, and its pid file writable, for them.
  const fs::path fake = tmp() / "sleepy-qemu";
  fs::create_directories(tmp() / "fake-out");
  fs::permissions(tmp() / "fake-out", fs::perms::all);
  const fs::path pid_file = tmp() / "fake-out" / "sleepy.pid";
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
        << "case \" $* \" in *\" -machine none \"*) exec " << kQemu72 << " \"$@\";; esac\n"
        << "echo $$ > " << pid_file.string() << "\n"
        << "exec sleep 600\n";
  }
  fs::permissions(fake, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  SmallDomain d;
  HugepagePool pool = HugepagePool::AtLeast(72);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string xml = WriteDomain(d);
  for (const char* mode : {"qemu", "launcher"}) {
    fs::remove(pid_file);
    auto t0 = Clock::now();
    RunResult r = Qlaunch({"start", "--prealloc", mode, "--qemu", fake.string(), xml},
                          {{"QLAUNCH_QMP_TIMEOUT_MS", "1500"}});
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    // QEMU holds the listening socket qlaunch made, so the connection is there; no greeting comes.
    EXPECT_NE(r.err.find("no QMP greeting within"), std::string::npos) << r.Describe();
    EXPECT_NE(r.err.find("(QLAUNCH_QMP_TIMEOUT_MS 1500"), std::string::npos) << r.Describe();
    EXPECT_LT(seconds, 30.0) << "the 1.5 s timeout was not honoured";
    std::ifstream in(pid_file);
    pid_t fake_pid = 0;
    ASSERT_TRUE(in >> fake_pid) << "the fake emulator never ran";
    EXPECT_TRUE(PidGone(fake_pid)) << "the silent emulator was left running";
    ExpectNothingLeft(d.name, free_before);
  }
}

TEST_F(LaunchFailureTest, SigintWhileTheLauncherPopulatesReleasesEverything) {
  SmallDomain d;
  d.cell_mib = 1024;  // 2 GiB: long enough to be caught populating
  const uint64_t pages = d.Bytes() / (2u << 20);
  HugepagePool pool = HugepagePool::AtLeast(pages + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  bool sent = false;
  RunResult r = InterruptWhilePopulating({"start", "--prealloc", "launcher", WriteDomain(d)}, free_before, &sent);
  ASSERT_TRUE(sent) << "qlaunch ended before population started:\n" << r.Describe();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("start of domain " + d.name + " interrupted by SIGINT"), std::string::npos) << r.Describe();
  ExpectNothingLeft(d.name, free_before);
}

TEST_F(LaunchFailureTest, SigintOrSigtermWhileQemuPreallocatesReleasesEverything) {
  SmallDomain d;
  d.cell_mib = 1024;
  const uint64_t pages = d.Bytes() / (2u << 20);
  HugepagePool pool = HugepagePool::AtLeast(pages + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string xml = WriteDomain(d);
  for (int sig : {SIGINT, SIGTERM}) {
    bool sent = false;
    RunResult r = InterruptWhilePopulating({"start", "--prealloc", "qemu", xml}, free_before, &sent, sig);
    ASSERT_TRUE(sent) << "qlaunch ended before preallocation started:\n" << r.Describe();
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")), std::string::npos)
        << r.Describe();
    ExpectNothingLeft(d.name, free_before);
  }
}

// QLAUNCH_FAULT makes start fail at each phase in turn, QEMU killed there as if it had died
// (launcher/lifecycle/start/start_failure.cc FaultPoint), on both preallocation paths: each time exit 1, a message
// naming the phase and (once spawned) how QEMU ended, and nothing left on the host.
TEST_F(LaunchFailureTest, FaultAtEveryPhaseReleasesEverything) {
  SmallDomain d;
  d.name = "qlaunch-fault";
  const uint64_t pages = d.Bytes() / (2u << 20);
  HugepagePool pool = HugepagePool::AtLeast(pages + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string xml = WriteDomain(d);
  for (const std::string mode : {"qemu", "launcher"}) {
    for (const std::string phase : {"preflight", "spawn", "qmp", "prealloc", "cont"}) {
      SCOPED_TRACE("--prealloc " + mode + ", QLAUNCH_FAULT=" + phase);
      RunResult r = Qlaunch({"start", "--prealloc", mode, xml}, {{"QLAUNCH_FAULT", phase}});
      EXPECT_EQ(r.exit_code, 1) << r.Describe();
      EXPECT_EQ(r.out, "");
      EXPECT_NE(r.err.find("fault injected at phase " + phase + " (QLAUNCH_FAULT)"), std::string::npos)
          << r.Describe();
      if (phase != "preflight") {
        EXPECT_NE(r.err.find("QEMU was killed by signal 9 (SIGKILL) while starting domain " + d.name),
                  std::string::npos)
            << r.Describe();
      }
      ExpectNothingLeft(d.name, free_before);
    }
  }
  RunResult r = Qlaunch({"start", xml}, {{"QLAUNCH_FAULT", "qmpp"}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("QLAUNCH_FAULT=qmpp: unknown phase"), std::string::npos) << r.Describe();
  ExpectNothingLeft(d.name, free_before);
}

// SIGINT and SIGTERM at a range of moments into a start whose preallocation takes a while
// (2 GiB), on both preallocation paths. Whatever the moment, one of: start refused with
// "interrupted by SIG...", qlaunch ended by the signal before it had created anything, or the
// guest already ran (then it is destroyed). Every time, the host is clean afterwards.
// The first moment is at once (before qlaunch can have a handler); the others count from when
// it has one, so at least the first of them lands inside the start however slow the machine.
TEST_F(LaunchFailureTest, SignalsAtAnyMomentLeaveNothingBehind) {
  if (std::string why = PrepareSlowDomain("qlaunch-signal"); !why.empty()) GTEST_SKIP() << why;
  const SmallDomain& d = slow_;
  const uint64_t free_before = free_before_;
  const std::string& xml = slow_xml_;
  for (const std::string mode : {"launcher", "qemu"}) {
    int interrupted = 0, before = 0, after = 0;
    for (int sig : {SIGINT, SIGTERM}) {
      const std::string sig_name = sig == SIGINT ? "SIGINT" : "SIGTERM";
      for (int delay_ms : {-1, 0, 20, 50, 100, 200, 400}) {
        SCOPED_TRACE("--prealloc " + mode + ", " + sig_name + " " +
                     (delay_ms < 0 ? "at once" : std::to_string(delay_ms) + " ms after its handler"));
        RunningProcess p({QlaunchBinary(), "start", "--json", "--prealloc", mode, xml}, BaseEnv());
        if (delay_ms >= 0) {
          ASSERT_TRUE(WaitUntilCatchingIntAndTerm(p.pid())) << p.Wait().Describe();
          std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        }
        ASSERT_EQ(::kill(p.pid(), sig), 0);
        RunResult r = p.Wait(std::chrono::seconds(60));
        ASSERT_FALSE(r.timed_out) << r.Describe();
        // Just after the handler came, the start has far to go: it must be refused.
        if (delay_ms == 0) {
          EXPECT_EQ(r.exit_code, 1) << r.Describe();
        }
        if (r.exit_code == 1) {
          EXPECT_NE(r.err.find("interrupted by " + sig_name), std::string::npos) << r.Describe();
          ++interrupted;
        } else {
          // Too early (no handler yet) or too late (the guest runs, our handler is gone).
          EXPECT_TRUE(r.exit_code == 0 || r.signal == sig) << r.Describe();
        }
        const bool running = fs::exists(DomainStateDir(d.name));
        if (r.exit_code != 1) ++(running ? after : before);
        if (running) {  // only a start that succeeded leaves its dir
          RunResult list = Qlaunch({"list", "--json"});
          nlohmann::json running = nlohmann::json::parse(list.out);
          ASSERT_EQ(running.size(), 1u) << list.Describe() << r.Describe();
          EXPECT_EQ(running[0]["state"], "running") << list.Describe() << r.Describe();
          RunResult destroy = Qlaunch({"destroy", d.name});
          EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
          ExpectHostClean(d.name, running[0]["pid"].get<pid_t>(), free_before);
        }
        ExpectNothingLeft(d.name, free_before);
      }
    }
    std::printf("[ signals  ] --prealloc %s: %d interrupted, %d ended before starting, %d after the guest ran\n",
                mode.c_str(), interrupted, before, after);
    EXPECT_GT(interrupted, 0) << "no signal arrived while a --prealloc " << mode << " start was under way";
  }
}

TEST_F(LaunchFailureTest, ConcurrentStartsOfOneNameHaveOneWinner) {
  SmallDomain d;
  HugepagePool pool = HugepagePool::AtLeast(2 * 64 + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string xml = WriteDomain(d);
  RunningProcess a({QlaunchBinary(), "start", "--json", xml}, BaseEnv());
  RunningProcess b({QlaunchBinary(), "start", "--json", xml}, BaseEnv());
  RunResult ra = a.Wait(), rb = b.Wait();
  ASSERT_EQ((ra.exit_code == 0) + (rb.exit_code == 0), 1) << ra.Describe() << rb.Describe();
  const RunResult& loser = ra.exit_code == 0 ? rb : ra;
  const RunResult& winner = ra.exit_code == 0 ? ra : rb;
  EXPECT_EQ(loser.exit_code, 1);
  EXPECT_NE(loser.err.find("domain " + d.name + " is already running"), std::string::npos) << loser.Describe();
  pid_t pid = nlohmann::json::parse(winner.out)["pid"].get<pid_t>();
  EXPECT_EQ(free_before - HugepagesFree(), 64u);
  RunResult destroy = Qlaunch({"destroy", d.name});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  ExpectHostClean(d.name, pid, free_before);
}

TEST_F(LaunchFailureTest, ListDropsDomainsWhoseQemuDied) {
  SmallDomain d;
  HugepagePool pool = HugepagePool::AtLeast(72);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  RunResult start = Qlaunch({"start", "--json", WriteDomain(d)});
  ASSERT_EQ(start.exit_code, 0) << start.Describe();
  pid_t pid = nlohmann::json::parse(start.out)["pid"].get<pid_t>();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 500 && !PidGone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  RunResult list = Qlaunch({"list", "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_EQ(list.out, "[]\n") << list.Describe();
  ExpectHostClean(d.name, pid, free_before);
}

// SIGKILL of qlaunch start while the guest's memory is being populated: no handler runs, so
// its state entry and the paused QEMU (holding the memory) stay. The next qlaunch command
// that looks at the name, list or a new start of it, kills that QEMU and removes the entry;
// the new start then gets the memory it needs.
TEST_F(LaunchFailureTest, AStartKilledOutrightIsClearedByTheNextCommand) {
  if (std::string why = PrepareSlowDomain("qlaunch-sigkill"); !why.empty()) GTEST_SKIP() << why;
  const SmallDomain& d = slow_;
  const uint64_t pages = slow_pages_, free_before = free_before_;
  const std::string& xml = slow_xml_;
  for (const std::string mode : {"launcher", "qemu"}) {
    for (const std::string next : {"list", "start"}) {
      SCOPED_TRACE("--prealloc " + mode + ", then " + next);
      bool sent = false;
      // The launcher's workers start before QEMU is spawned: wait for QEMU (its pid file) too.
      RunResult r = InterruptWhilePopulating({"start", "--json", "--prealloc", mode, xml}, free_before, &sent, SIGKILL,
                                             DomainStateDir(d.name) / "pid");
      ASSERT_TRUE(sent) << r.Describe();
      ASSERT_EQ(r.signal, SIGKILL) << r.Describe();
      std::ifstream pid_file(DomainStateDir(d.name) / "pid");
      pid_t orphan = 0;
      ASSERT_TRUE(pid_file >> orphan) << "no pid file in " << DomainStateDir(d.name);
      EXPECT_FALSE(PidGone(orphan)) << "the paused QEMU " << orphan << " should still be there";
      if (next == "list") {
        RunResult list = Qlaunch({"list", "--json"});
        EXPECT_EQ(list.exit_code, 0) << list.Describe();
        EXPECT_EQ(list.out, "[]\n") << list.Describe();
        ExpectHostClean(d.name, orphan, free_before);
      } else {
        RunResult again = Qlaunch({"start", "--json", "--prealloc", mode, xml});
        ASSERT_EQ(again.exit_code, 0) << again.Describe();
        EXPECT_TRUE(PidGone(orphan)) << "the orphaned QEMU " << orphan << " is still alive";
        ::waitpid(orphan, nullptr, WNOHANG);  // adopted by us as subreaper
        pid_t pid = nlohmann::json::parse(again.out)["pid"].get<pid_t>();
        EXPECT_NE(pid, orphan);
        EXPECT_EQ(free_before - HugepagesFree(), pages);
        RunResult destroy = Qlaunch({"destroy", d.name});
        EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
        ExpectHostClean(d.name, pid, free_before);
      }
      ExpectNothingLeft(d.name, free_before);
    }
  }
}

TEST_F(LaunchFailureTest, DestroyOfAnUnknownName) {
  RunResult r = Qlaunch({"destroy", "nosuch"});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("domain nosuch is not running"), std::string::npos) << r.Describe();
}

}  // namespace
}  // namespace qlaunch::testing
