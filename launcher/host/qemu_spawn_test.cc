#include "launcher/host/qemu_spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "launcher/host/cgroup.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

class QemuSpawnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qlaunch-spawn-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Waits until the process has exited (it is reaped by ExitDescription).
  static std::string WaitExit(QemuProcess& p) {
    for (int i = 0; i < 1000; ++i) {
      if (auto d = p.ExitDescription()) return *d;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return "still running";
  }

  fs::path dir_;
};

TEST_F(QemuSpawnTest, ChildGetsOnlyStdioAndTheInheritedFdsInItsOwnSession) {
  // An fd that is not close-on-exec here must still not reach the child.
  int leaky = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaky, 0);
  int block = FreeFdBlock(3, 1);
  FdReservation reservation(block, 1);
  int efd = ::eventfd(0, EFD_CLOEXEC);
  reservation.Place(block, efd);
  ::close(efd);

  SpawnSpec spec;
  // ls runs in its own process, so it lists the shell's fds without adding any of its own.
  spec.argv = {"/bin/sh", "-c",
               "ls /proc/$$/fd; echo stat $(cut -d' ' -f1,6 /proc/$$/stat); echo err >&2; exit 7"};
  spec.log_file = dir_ / "child.log";
  spec.inherit_fds = reservation.fds();
  auto child = QemuProcess::Spawn(spec);
  EXPECT_EQ(WaitExit(*child), "exited with status 7");
  ::close(leaky);

  std::string log = Read(spec.log_file);
  std::istringstream lines(log);
  std::set<int> fds;
  std::string line;
  while (std::getline(lines, line) && line.rfind("stat", 0) != 0) fds.insert(std::stoi(line));
  EXPECT_EQ(fds, (std::set<int>{0, 1, 2, block})) << log;
  EXPECT_NE(log.find("stat " + std::to_string(child->pid()) + " " + std::to_string(child->pid())), std::string::npos)
      << log;
  EXPECT_NE(log.find("err\n"), std::string::npos) << "stderr goes to the log too:\n" << log;
}

TEST_F(QemuSpawnTest, AffinityIsAppliedBeforeExec) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "grep Cpus_allowed_list /proc/$$/status"};
  spec.log_file = dir_ / "aff.log";
  spec.affinity = IdSet{0};
  auto child = QemuProcess::Spawn(spec);
  EXPECT_EQ(WaitExit(*child), "exited with status 0");
  EXPECT_NE(Read(spec.log_file).find("Cpus_allowed_list:\t0\n"), std::string::npos) << Read(spec.log_file);
}

TEST_F(QemuSpawnTest, MissingBinaryIsAnErrorNamingIt) {
  SpawnSpec spec;
  spec.argv = {(dir_ / "no-such-qemu").string()};
  spec.log_file = dir_ / "x.log";
  try {
    QemuProcess::Spawn(spec);
    FAIL() << "spawned a missing binary";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(spec.argv[0]), std::string::npos) << e.what();
  }
}

// clone3 into the cgroup's directory: the child's first instruction already runs in it.
TEST_F(QemuSpawnTest, AChildIsBornInTheCgroupItIsGiven) {
  std::optional<fs::path> mount = Cgroup2Mount();
  ASSERT_TRUE(mount) << "no cgroup v2 mounted here";
  const std::string name = "qlaunch-spawn-test-" + std::to_string(::getpid());
  const fs::path cg = *mount / name;
  ASSERT_TRUE(fs::create_directory(cg)) << cg;
  const int cg_fd = ::open(cg.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cg_fd, 0);
  const std::string own_before = Read("/proc/self/cgroup");
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "grep '^0::' /proc/$$/cgroup"};
  spec.log_file = dir_ / "cg.log";
  spec.cgroup_fd = cg_fd;
  auto child = QemuProcess::Spawn(spec);
  EXPECT_EQ(WaitExit(*child), "exited with status 0");
  ::close(cg_fd);
  EXPECT_EQ(Read(spec.log_file), "0::/" + name + "\n");
  EXPECT_EQ(Read("/proc/self/cgroup"), own_before) << "the caller stays where it was";
  EXPECT_EQ(::rmdir(cg.c_str()), 0) << std::strerror(errno);
}

// Every signal is blocked across the clone: the caller gets its own mask back, and the child
// starts with an empty one (block_stop_signals unset).
TEST_F(QemuSpawnTest, TheCallersSignalMaskIsKeptAndTheChildsIsEmpty) {
  sigset_t usr1, before, after;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &before), 0);
  SpawnSpec spec;
  // grep reads its own mask, the one the spawn gave at exec. (Through `sh -c`, grep read the
  // shell's, which dash blocks wholesale around its fork of grep: a race the test sometimes lost.)
  spec.argv = {"/bin/grep", "SigBlk", "/proc/self/status"};
  spec.log_file = dir_ / "mask.log";
  auto child = QemuProcess::Spawn(spec);
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &before, &after), 0);
  EXPECT_TRUE(sigismember(&after, SIGUSR1));
  EXPECT_FALSE(sigismember(&after, SIGUSR2));
  EXPECT_EQ(WaitExit(*child), "exited with status 0");
  EXPECT_EQ(Read(spec.log_file), "SigBlk:\t0000000000000000\n");
}

TEST_F(QemuSpawnTest, DestructionKillsAndReapsUnlessDetached) {
  SpawnSpec spec;
  spec.argv = {"/bin/sleep", "60"};
  spec.log_file = dir_ / "s.log";
  pid_t pid;
  {
    auto child = QemuProcess::Spawn(spec);
    pid = child->pid();
    EXPECT_TRUE(ProcessAlive(child->ref()));
    EXPECT_FALSE(child->ExitDescription());
  }
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(pid)));  // killed and reaped

  auto child = QemuProcess::Spawn(spec);
  ProcessRef ref = child->ref();
  child->Detach();
  child.reset();
  EXPECT_TRUE(ProcessAlive(ref));
  ::kill(ref.pid, SIGKILL);
  ::waitpid(ref.pid, nullptr, 0);
}

TEST_F(QemuSpawnTest, KillReportsTheSignal) {
  SpawnSpec spec;
  spec.argv = {"/bin/sleep", "60"};
  spec.log_file = dir_ / "s.log";
  auto child = QemuProcess::Spawn(spec);
  child->SendKill();
  EXPECT_EQ(WaitExit(*child), "was killed by signal 9 (SIGKILL)");
}

TEST_F(QemuSpawnTest, SetProcessAffinityChangesEveryThread) {
  SpawnSpec spec;
  spec.argv = {"/bin/sleep", "60"};
  spec.log_file = dir_ / "s.log";
  spec.affinity = IdSet{0};
  auto child = QemuProcess::Spawn(spec);
  IdSet all;
  for (unsigned cpu = 0; cpu < std::thread::hardware_concurrency(); ++cpu) all.Insert(cpu);
  EXPECT_EQ(SetProcessAffinity(child->pid(), all), 1u);
  std::string status = Read("/proc/" + std::to_string(child->pid()) + "/status");
  EXPECT_NE(status.find("Cpus_allowed_list:\t" + all.ToString() + "\n"), std::string::npos) << status;
}

TEST(FreeFdBlock, SkipsUsedNumbers) {
  int first = FreeFdBlock(3, 3);
  for (int fd = first; fd < first + 3; ++fd) EXPECT_EQ(::fcntl(fd, F_GETFD), -1);
  FdReservation r(first, 3);
  EXPECT_EQ(r.fds(), (std::vector<int>{first, first + 1, first + 2}));
  for (int fd : r.fds()) EXPECT_EQ(::fcntl(fd, F_GETFD), FD_CLOEXEC);
  EXPECT_GE(FreeFdBlock(first, 2), first + 3);
  EXPECT_THROW(FdReservation(first + 1, 1), std::runtime_error);
  r.Close();
  EXPECT_EQ(::fcntl(first, F_GETFD), -1);
}

TEST(LogTail, LastLinesOnly) {
  char tmpl[] = "/tmp/qlaunch-logtail-XXXXXX";
  int fd = ::mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ::close(fd);
  {
    std::ofstream out(tmpl);
    for (int i = 1; i <= 30; ++i) out << "line " << i << "\n";
  }
  EXPECT_EQ(LogTail(tmpl, 3), "line 28\nline 29\nline 30");
  EXPECT_EQ(LogTail(tmpl, 100).substr(0, 7), "line 1\n");
  EXPECT_EQ(LogTail("/nonexistent/log"), "");
  fs::remove(tmpl);
}

}  // namespace
}  // namespace qlaunch::launcher
