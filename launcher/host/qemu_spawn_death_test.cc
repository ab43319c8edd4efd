// QemuProcess::Spawn with die_with_parent and block_stop_signals (the `qlaunch run` child):
// the child dies when the process that spawned it is SIGKILLed, and keeps SIGTERM/SIGINT/SIGHUP
// blocked across exec. A plain spawn outlives its parent, as `qlaunch start` needs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "launcher/host/qemu_spawn.h"
#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

using std::chrono::milliseconds;

// Alive and not a zombie.
bool Running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

std::string StatusField(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 2);
  return "";
}

// Forks a parent that spawns `sleep 60` with `die_with_parent`, reports its pid and waits to be
// killed. Returns {parent, child}.
std::pair<pid_t, pid_t> SpawnUnderAParent(const std::filesystem::path& log, bool die_with_parent) {
  int fds[2];
  if (::pipe(fds) != 0) return {0, 0};
  pid_t parent = ::fork();
  if (parent == 0) {
    ::close(fds[0]);
    SpawnSpec spec;
    spec.argv = {"/bin/sleep", "60"};
    spec.log_file = log;
    spec.die_with_parent = die_with_parent;
    pid_t child = 0;
    try {
      auto p = QemuProcess::Spawn(spec);
      child = p->pid();
      p->Detach();
    } catch (...) {
    }
    (void)!::write(fds[1], &child, sizeof child);
    ::pause();
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t child = 0;
  (void)!::read(fds[0], &child, sizeof child);
  ::close(fds[0]);
  return {parent, child};
}

TEST(QemuSpawnDeath, DieWithParentEndsTheChildWhenItsParentIsKilled) {
  testing::TempDir tmp;
  auto [parent, child] = SpawnUnderAParent(tmp.path / "log", /*die_with_parent=*/true);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(Running(child));
  EXPECT_EQ(StatusField(child, "PPid"), std::to_string(parent));
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (Running(child) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2))
    std::this_thread::sleep_for(milliseconds(2));
  EXPECT_FALSE(Running(child)) << "the child outlived its killed parent";
}

TEST(QemuSpawnDeath, APlainSpawnOutlivesItsParent) {
  testing::TempDir tmp;
  auto [parent, child] = SpawnUnderAParent(tmp.path / "log", /*die_with_parent=*/false);
  ASSERT_GT(child, 0);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_TRUE(Running(child));
  ::kill(child, SIGKILL);
}

TEST(QemuSpawnDeath, StopSignalsStayBlockedAcrossExec) {
  testing::TempDir tmp;
  SpawnSpec spec;
  spec.argv = {"/bin/sleep", "60"};
  spec.log_file = tmp.path / "log";
  spec.block_stop_signals = true;
  auto p = QemuProcess::Spawn(spec);
  const unsigned long blocked = std::stoul(StatusField(p->pid(), "SigBlk"), nullptr, 16);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) EXPECT_TRUE(blocked & (1ul << (sig - 1))) << "signal " << sig;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::kill(p->pid(), sig);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(p->ExitDescription().has_value()) << "it died of a blocked signal";
  p->Kill();
  EXPECT_EQ(*p->ExitDescription(), "was killed by signal 9 (SIGKILL)");

  SpawnSpec plain = spec;
  plain.block_stop_signals = false;
  auto q = QemuProcess::Spawn(plain);
  EXPECT_EQ(std::stoul(StatusField(q->pid(), "SigBlk"), nullptr, 16), 0ul);
  ::kill(q->pid(), SIGTERM);
  for (int i = 0; i < 200 && !q->ExitDescription(); ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(q->ExitDescription().value_or("running"), "was killed by signal 15 (SIGTERM)");
}

}  // namespace
}  // namespace qlaunch::launcher
