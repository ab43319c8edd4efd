// qlaunch start failing on real QEMU 7.2, and what it leaves behind: nothing. Each test checks
// the exit code, the message, and the host afterwards (processes, memfds, free hugepages,
// state directory).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
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

  // No process of ours runs on the state dir, and the domain's state dir is gone.
  void ExpectNothingStarted(const std::string& name, uint64_t free_before) {
    EXPECT_EQ(LivePidsWithCmdline(StateDir().string()), std::vector<pid_t>{});
    EXPECT_EQ(PidsHoldingFd("memfd:qlaunch:" + name + ":"), std::vector<pid_t>{});
    EXPECT_EQ(HugepagesFree(), free_before);
    EXPECT_FALSE(fs::exists(DomainStateDir(name))) << DomainStateDir(name) << " left behind";
  }

  // Starts `args` in the background, waits until its memory starts to be populated (the free
  // pool shrinks), then sends `sig`. Returns the result; *sent tells whether the signal went
  // out before qlaunch had finished.
  RunResult InterruptWhilePopulating(const std::vector<std::string>& args, uint64_t free_before, bool* sent,
                                     int sig = SIGINT) {
    std::vector<std::string> argv = {QlaunchBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunningProcess p(argv, BaseEnv());
    *sent = false;
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline && !PidGone(p.pid())) {
      if (HugepagesFree() < free_before) {
        *sent = ::kill(p.pid(), sig) == 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return p.Wait(std::chrono::seconds(60));
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
    ExpectNothingStarted(d.name, 10);
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
  ExpectNothingStarted(d.name, free_before);

  d.emulator = missing;  // from the XML: the message points at the <emulator> line
  const std::string xml = WriteDomain(d);
  r = Qlaunch({"start", xml});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(xml + ":"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("<emulator>: emulator " + missing + " does not exist"), std::string::npos) << r.Describe();
  ExpectNothingStarted(d.name, free_before);
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
    ExpectNothingStarted(d.name, free_before);
  }
}

TEST_F(LaunchFailureTest, QmpThatNeverAnswersTimesOut) {
  // A fake emulator: the capability probe (-machine none) gets the real QEMU; the launch gets
  // a process that records its pid and sleeps without ever opening the QMP socket.
  const fs::path fake = tmp() / "sleepy-qemu";
  const fs::path pid_file = tmp() / "sleepy.pid";
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
        << "case \" $* \" in *\" -machine none \"*) exec " << kQemu72 << " \"$@\";; esac\n"
        << "echo $$ > " << pid_file.string() << "\n"
        << "exec sleep 600\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
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
    EXPECT_NE(r.err.find("did not open its QMP socket"), std::string::npos) << r.Describe();
    EXPECT_NE(r.err.find("(QLAUNCH_QMP_TIMEOUT_MS 1500"), std::string::npos) << r.Describe();
    EXPECT_LT(seconds, 30.0) << "the 1.5 s timeout was not honoured";
    std::ifstream in(pid_file);
    pid_t fake_pid = 0;
    ASSERT_TRUE(in >> fake_pid) << "the fake emulator never ran";
    EXPECT_TRUE(PidGone(fake_pid)) << "the silent emulator was left running";
    ExpectNothingStarted(d.name, free_before);
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
  ExpectNothingStarted(d.name, free_before);
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
    ExpectNothingStarted(d.name, free_before);
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

TEST_F(LaunchFailureTest, DestroyOfAnUnknownName) {
  RunResult r = Qlaunch({"destroy", "nosuch"});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("domain nosuch is not running"), std::string::npos) << r.Describe();
}

}  // namespace
}  // namespace qlaunch::testing
