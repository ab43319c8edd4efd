#include "launcher/host/state_dir.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

class StateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qlaunch-state-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  // A pid that existed and is gone now (a reaped child).
  static pid_t DeadPid() {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ::waitpid(pid, nullptr, 0);
    return pid;
  }

  void WriteFile(const fs::path& p, const std::string& text) {
    std::ofstream out(p);
    out << text;
  }

  fs::path root_;
};

TEST_F(StateDirTest, ClaimCreatesDirWithOwnerAndReleaseRemovesIt) {
  StateDir state(root_);
  {
    StateClaim claim = StateClaim::Acquire(state, "vm1");
    EXPECT_TRUE(fs::is_directory(root_ / "vm1"));
    auto owner = ReadProcessRef(root_ / "vm1" / "owner", {});
    ASSERT_TRUE(owner);
    EXPECT_EQ(owner->pid, ::getpid());
    EXPECT_EQ(state.Inspect("vm1").kind, DomainStatus::Kind::kStarting);
  }
  EXPECT_FALSE(fs::exists(root_ / "vm1"));
}

TEST_F(StateDirTest, SecondClaimOfSameNameIsRefusedNamingTheHolder) {
  StateDir state(root_);
  StateClaim first = StateClaim::Acquire(state, "vm1");
  try {
    StateClaim::Acquire(state, "vm1");
    FAIL() << "second claim succeeded";
  } catch (const AlreadyRunningError& e) {
    EXPECT_EQ(e.pid(), ::getpid());
    EXPECT_NE(std::string(e.what()).find("domain vm1 is already running"), std::string::npos) << e.what();
  }
  // Once QEMU is recorded and the start committed, the refusal names QEMU's pid.
  first.RecordQemu(RefOf(::getpid()));
  first.Commit();
  try {
    StateClaim::Acquire(state, "vm1");
    FAIL() << "claim of a running domain succeeded";
  } catch (const AlreadyRunningError& e) {
    EXPECT_EQ(std::string(e.what()), "domain vm1 is already running (pid " + std::to_string(::getpid()) + ")");
  }
  EXPECT_TRUE(fs::exists(root_ / "vm1" / "pid"));  // the refused claim removed nothing
  EXPECT_FALSE(fs::exists(root_ / "vm1" / "owner"));
}

TEST_F(StateDirTest, ConcurrentClaimsFromProcessesHaveExactlyOneWinner) {
  // Eight processes race for the same name; each reports 1 when it won. Winners keep their
  // claim until every process has tried (they wait for a go-file to vanish).
  const int kProcs = 8;
  fs::path go = root_ / "go";
  WriteFile(go, "");
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      while (fs::exists(go)) ::usleep(100);
      int won = 0;
      try {
        StateClaim claim = StateClaim::Acquire(StateDir(root_), "race");
        won = 1;
        ::usleep(200 * 1000);  // hold it while the others try
      } catch (const AlreadyRunningError&) {
      } catch (...) {
        ::_exit(3);
      }
      ::_exit(won);
    }
    kids.push_back(pid);
  }
  fs::remove(go);
  int winners = 0;
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 3);
    winners += WEXITSTATUS(status);
  }
  EXPECT_EQ(winners, 1);
  EXPECT_FALSE(fs::exists(root_ / "race"));  // the winner released it
}

TEST_F(StateDirTest, StaleDirWithDeadQemuIsReclaimed) {
  StateDir state(root_);
  fs::create_directories(root_ / "vm1");
  pid_t dead = DeadPid();
  WriteFile(root_ / "vm1" / "pid", std::to_string(dead) + "\n");
  WriteFile(root_ / "vm1" / "qemu.log", "old log\n");
  EXPECT_EQ(state.Inspect("vm1").kind, DomainStatus::Kind::kStale);
  StateClaim claim = StateClaim::Acquire(state, "vm1");
  EXPECT_FALSE(fs::exists(root_ / "vm1" / "qemu.log"));  // the old contents went
  EXPECT_FALSE(fs::exists(root_ / "vm1" / "pid"));
  EXPECT_TRUE(fs::exists(root_ / "vm1" / "owner"));
}

TEST_F(StateDirTest, StaleDirOfAStartThatDiedIsReclaimedAndItsQemuKilled) {
  // A start was killed after spawning QEMU: the owner is dead, "QEMU" (here: a child that
  // sleeps) still runs. Reclaiming kills it.
  StateDir state(root_);
  fs::create_directories(root_ / "vm1");
  pid_t orphan = ::fork();
  if (orphan == 0) {
    ::execlp("sleep", "sleep", "60", nullptr);
    ::_exit(127);
  }
  ProcessRef ref = RefOf(orphan);
  WriteFile(root_ / "vm1" / "owner", std::to_string(DeadPid()) + " 0\n");
  WriteFile(root_ / "vm1" / "pid", std::to_string(orphan) + "\n");
  WriteFile(root_ / "vm1" / "pid.start", std::to_string(ref.start_time) + "\n");
  DomainStatus st = state.Inspect("vm1");
  EXPECT_EQ(st.kind, DomainStatus::Kind::kStale);
  EXPECT_TRUE(st.qemu_alive);
  StateClaim claim = StateClaim::Acquire(state, "vm1");
  int status = 0;
  ASSERT_EQ(::waitpid(orphan, &status, 0), orphan);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST_F(StateDirTest, PidReuseIsNotMistakenForTheRecordedProcess) {
  // Our own pid with a start time that is not ours: another process that had this pid.
  ProcessRef me = RefOf(::getpid());
  ASSERT_NE(me.start_time, 0u);
  EXPECT_TRUE(ProcessAlive(me));
  EXPECT_FALSE(ProcessAlive(ProcessRef{me.pid, me.start_time + 1}));
  EXPECT_FALSE(ProcessAlive(ProcessRef{DeadPid(), 0}));
}

TEST_F(StateDirTest, ZombieCountsAsGone) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  // Not reaped yet: a zombie until waitpid.
  for (int i = 0; i < 500; ++i) {
    if (!ProcessAlive(ProcessRef{pid, 0})) break;
    ::usleep(1000);
  }
  EXPECT_FALSE(ProcessAlive(ProcessRef{pid, 0}));
  EXPECT_TRUE(fs::exists("/proc/" + std::to_string(pid)));  // still in the process table
  ::waitpid(pid, nullptr, 0);
}

TEST_F(StateDirTest, CleanupPathsAreRemovedWithTheDirectory) {
  StateDir state(root_);
  fs::path outside = root_ / "hugetlbfs-dir";
  {
    StateClaim claim = StateClaim::Acquire(state, "vm1");
    fs::create_directories(outside / "sub");
    claim.AddCleanupPath(outside);
  }
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_FALSE(fs::exists(root_ / "vm1"));
}

TEST_F(StateDirTest, RemoveIfPidLeavesANewerDomainAlone) {
  StateDir state(root_);
  StateClaim claim = StateClaim::Acquire(state, "vm1");
  claim.RecordQemu(RefOf(::getpid()));
  claim.Commit();
  state.RemoveIfPid("vm1", ProcessRef{DeadPid(), 0});
  EXPECT_TRUE(fs::exists(root_ / "vm1"));
  state.RemoveIfPid("vm1", RefOf(::getpid()));
  EXPECT_FALSE(fs::exists(root_ / "vm1"));
}

TEST_F(StateDirTest, NamesListsDomainDirsOnly) {
  StateDir state(root_);
  fs::create_directories(root_ / "b");
  fs::create_directories(root_ / "a");
  fs::create_directories(root_ / ".hidden");
  WriteFile(root_ / "file", "");
  EXPECT_EQ(state.Names(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(StateDirTest, BadNamesAreRejected) {
  StateDir state(root_);
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", ".x", "a/b", std::string(201, 'x')})
    EXPECT_THROW(StateClaim::Acquire(state, bad), std::invalid_argument) << bad;
}

TEST(DefaultStateRoot, FollowsEnvironment) {
  const char* old = std::getenv("QLAUNCH_STATE_DIR");
  std::string saved = old ? old : "";
  ::setenv("QLAUNCH_STATE_DIR", "/tmp/elsewhere", 1);
  EXPECT_EQ(DefaultStateRoot(), fs::path("/tmp/elsewhere"));
  ::unsetenv("QLAUNCH_STATE_DIR");
  EXPECT_EQ(DefaultStateRoot(), fs::path("/run/qlaunch"));
  if (old) ::setenv("QLAUNCH_STATE_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace qlaunch::launcher
