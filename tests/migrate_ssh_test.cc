// Over 400 lines for a reason: the test's own sshd, keys and two hosts are set up once for its 7 cases.
// `qlaunch migrate NAME ssh://...` between two "hosts" on this machine (two state roots), through a
// real sshd of the test's own on 127.0.0.1 (host key, client key and config in the test's temp dir):
// the destination prepared over ssh from the live XML on stdin (`start --incoming ... -`), the guest
// moved, the source released; a destination that cannot start leaves the source as it was; and a
// migration that breaks half-way (the destination's QEMU killed, or SIGINT to migrate) leaves the
// source running and nothing of the destination prepared over ssh (the guest's memory filled with
// random bytes and the bandwidth capped at 1 MiB/s, so the copy lasts long enough to break it).
// Also `start -`: the XML from stdin, its errors naming <stdin>. And the confirm: a destination that
// dies once the stream is in, before it answers over ssh.
// Over 400 lines for a reason: the private sshd and the slow-migration set-up are this file's own.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "support/guest_memory.h"
#include "support/launch_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSshd = "/usr/sbin/sshd";

// A port nobody listens on now (the kernel's choice for a bind to port 0).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Our child `pid` has not exited (it is left unreaped for RunningProcess::Wait).
bool StillRuns(pid_t pid) {
  siginfo_t si{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0;
}

bool Accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

class MigrateSshTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(fs::exists(kSshd)) << kSshd << " missing: scripts/setup installs openssh-server";
    ssh_dir_ = tmp() / "ssh";
    fs::create_directories(ssh_dir_);
    for (const char* key : {"host_key", "client_key"}) {
      RunResult k = RunningProcess({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                                    (ssh_dir_ / key).string()}, {}).Wait();
      ASSERT_EQ(k.exit_code, 0) << k.Describe();
    }
    fs::copy_file(ssh_dir_ / "client_key.pub", ssh_dir_ / "authorized_keys");
    std::ofstream(ssh_dir_ / "sshd_config")
        << "ListenAddress 127.0.0.1\nHostKey " << (ssh_dir_ / "host_key").string() << "\nPidFile "
        << (ssh_dir_ / "sshd.pid").string() << "\nAuthorizedKeysFile " << (ssh_dir_ / "authorized_keys").string()
        << "\nPermitRootLogin yes\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
           "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n";
    fs::create_directories("/run/sshd");  // sshd's privilege separation dir, as the package's service makes it
    port_ = FreePort();
    sshd_ = std::make_unique<RunningProcess>(std::vector<std::string>{kSshd, "-D", "-e", "-f",
                                                                      (ssh_dir_ / "sshd_config").string(), "-p",
                                                                      std::to_string(port_)},
                                             Env{});
    for (int i = 0; i < 500 && !Accepts(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(Accepts(port_)) << "sshd does not listen on " << port_ << ": " << sshd_->ErrSoFar();
  }

  void TearDown() override {
    if (sshd_) StopSshd();
    // What a failed test left on the destination's root (not one LaunchTest::TearDown knows).
    std::error_code ec;
    if (fs::is_directory(DestRoot(), ec))
      for (const auto& e : fs::directory_iterator(DestRoot(), ec))
        if (e.is_directory()) Qlaunch({"destroy", e.path().filename().string()}, DestEnv());
    LaunchTest::TearDown();
  }

  void StopSshd() {
    const pid_t pid = sshd_->pid();
    ::kill(pid, SIGTERM);
    RunResult r = sshd_->Wait(std::chrono::seconds(10));
    EXPECT_FALSE(r.timed_out) << r.Describe();
    EXPECT_TRUE(PidGone(pid));
    sshd_.reset();
  }

  void DiesBeforeItConfirms(const std::string& name, bool paused);

  fs::path DestRoot() const { return tmp() / "dest-state"; }
  Env DestEnv() const { return Env{{"QLAUNCH_STATE_DIR", DestRoot().string()}}; }

  std::string SshUri() const { return "ssh://root@127.0.0.1:" + std::to_string(port_); }
  // migrate NAME ssh://root@127.0.0.1:PORT --json, the destination's qlaunch `remote`, then `more`.
  std::vector<std::string> MigrateArgs(const std::string& name, const std::string& remote,
                                       const std::vector<std::string>& more = {}) const {
    std::vector<std::string> args{"migrate", name, SshUri(), "--remote-qlaunch", remote, "--ssh-identity",
                                  (ssh_dir_ / "client_key").string(), "--ssh-option", "StrictHostKeyChecking=no",
                                  "--ssh-option", "UserKnownHostsFile=/dev/null", "--ssh-option", "LogLevel=ERROR",
                                  "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  RunResult MigrateOverSsh(const std::string& name, const std::string& remote) {
    return Qlaunch(MigrateArgs(name, remote));
  }
  std::string RemoteQlaunch() const {
    return "env QLAUNCH_STATE_DIR=" + DestRoot().string() + " QLAUNCH_CACHE_DIR=" + (tmp() / "cache").string() + " " +
           QlaunchBinary();
  }

  // The state `list --json` under `env` shows for `name` ("" when it is not listed), and its pid.
  std::pair<std::string, pid_t> Listed(const std::string& name, const Env& env = {}) {
    const json all = json::parse(Qlaunch({"list", "--json"}, env).out, nullptr, false);
    if (all.is_array())
      for (const auto& e : all)
        if (e.value("name", "") == name) return {e.value("state", ""), e["pid"].is_number() ? e["pid"].get<pid_t>() : 0};
    return {"", 0};
  }
  // query-migrate's status on the destination's QEMU ("active" once the stream flows in).
  std::string DestMigrationStatus(const std::string& name) {
    RunResult q = Qlaunch({"qemu-monitor-command", name, R"({"execute":"query-migrate"})"}, DestEnv());
    const json j = json::parse(q.out, nullptr, false);  // {"return":{"status":...}}
    return j.is_object() && j.contains("return") && j["return"].is_object() ? j["return"].value("status", "") : "";
  }

  // A migration over ssh that is slow to finish, caught in the middle: `d` started here and its
  // memory filled with random bytes, `migrate ... --bandwidth 1` running in the background, the
  // destination prepared over ssh and the stream flowing into it for a while.
  struct Breaking {
    pid_t source = 0, dest = 0;  // the two QEMUs; dest from the destination root's pid file
    std::unique_ptr<RunningProcess> migrate;
  };
  Breaking StartSlowMigration(const SmallDomain& d) {
    Breaking b;
    RunResult start = Qlaunch({"start", "--json", WriteDomain(d)});
    EXPECT_EQ(start.exit_code, 0) << start.Describe();
    b.source = json::parse(start.out, nullptr, false).value("pid", 0);
    EXPECT_EQ(FillQemuMemfds(b.source, d.name, 42), 2) << "QEMU's memfds of " << d.name;
    std::vector<std::string> argv = MigrateArgs(d.name, RemoteQlaunch(), {"--bandwidth", "1"});
    argv.insert(argv.begin(), QlaunchBinary());
    b.migrate = std::make_unique<RunningProcess>(argv, BaseEnv());
    bool active = false;
    for (int i = 0; i < 300 && !active && StillRuns(b.migrate->pid()); ++i) {  // the remote start, the first bytes
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      active = fs::exists(DestRoot() / d.name / "pid") && DestMigrationStatus(d.name) == "active";
    }
    EXPECT_TRUE(active) << "no incoming migration on the destination: " << b.migrate->ErrSoFar();
    EXPECT_EQ(Listed(d.name).first, "migrating");
    EXPECT_EQ(Listed(d.name, DestEnv()).first, "incoming");
    b.dest = std::atoi(Slurp(DestRoot() / d.name / "pid").c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // well into the copy (128 MiB at 1 MiB/s)
    EXPECT_TRUE(StillRuns(b.migrate->pid())) << "migrate ended early: " << b.migrate->ErrSoFar();
    return b;
  }

  // The source as it was: the same QEMU, running, answering.
  void ExpectSourceRunsOn(const std::string& name, pid_t source) {
    EXPECT_EQ(Listed(name), std::make_pair(std::string("running"), source));
    RunResult status = Qlaunch({"qemu-monitor-command", name, R"({"execute":"query-status"})"});
    EXPECT_NE(status.out.find("\"running\""), std::string::npos) << status.Describe();
  }
  // Nothing of the destination: no state dir, its QEMU gone, no process on its root. Looked at
  // before any qlaunch runs there, since a `list` there would clear a stale entry by itself.
  void ExpectDestinationGone(const std::string& name, pid_t dest) {
    EXPECT_FALSE(fs::exists(DestRoot() / name)) << "the destination's state is left: not torn down over ssh";
    EXPECT_TRUE(PidGone(dest));
    EXPECT_EQ(LivePidsWithCmdline(DestRoot().string()), std::vector<pid_t>{});
    RunResult there = Qlaunch({"list", "--json"}, DestEnv());
    EXPECT_EQ(there.out, "[]\n") << there.Describe();
  }
  // A guest `name` (the pool holding two of it) whose slow migration over ssh is under way.
  void BreakHalfWay(const std::string& name) {
    brk_dom_.name = name;
    brk_dom_.type = kFilledGuestType;
    brk_pages_ = brk_dom_.Bytes() / (2u << 20);
    brk_pool_.emplace(HugepagePool::AtLeast(2 * brk_pages_ + 8));
    if (!brk_pool_->ok()) GTEST_SKIP() << brk_pool_->error();
    brk_free_ = HugepagesFree();
    brk_ = StartSlowMigration(brk_dom_);
    ASSERT_GT(brk_.dest, 0);
    ASSERT_NE(brk_.dest, brk_.source);
    EXPECT_EQ(brk_free_ - HugepagesFree(), 2 * brk_pages_) << "both ends hold the guest's memory";
  }
  // Then, once it broke: nothing of the destination, the source as it was with only its pages
  // taken; the source destroyed, both roots are clean.
  void ExpectOnlyTheSourceLeft() {
    const std::string& name = brk_dom_.name;
    ExpectDestinationGone(name, brk_.dest);
    ExpectSourceRunsOn(name, brk_.source);
    EXPECT_EQ(brk_free_ - HugepagesFree(), brk_pages_) << "only the source's pages are taken";
    RunResult destroy = Qlaunch({"destroy", name});
    EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
    ExpectHostClean(name, brk_.source, brk_free_);
    ExpectHostClean(name, brk_.dest, brk_free_, DestRoot());
    StopSshd();
  }
  SmallDomain brk_dom_;
  uint64_t brk_pages_ = 0, brk_free_ = 0;
  std::optional<HugepagePool> brk_pool_;
  Breaking brk_;

  fs::path ssh_dir_;
  int port_ = 0;
  std::unique_ptr<RunningProcess> sshd_;
};

TEST_F(MigrateSshTest, MovesTheGuestToADestinationItPreparesOverSsh) {
  SmallDomain d;
  d.name = "mig-ssh";
  const uint64_t pages = d.Bytes() / (2u << 20);
  ASSERT_EQ(DefaultHugepageBytes(), 2u << 20) << "these tests assume 2 MiB default hugepages";
  HugepagePool pool = HugepagePool::AtLeast(2 * pages + 8);  // both ends' memory, for the length of the move
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  RunResult start = Qlaunch({"start", "--json", WriteDomain(d)});
  ASSERT_EQ(start.exit_code, 0) << start.Describe();
  const pid_t source_pid = json::parse(start.out).at("pid").get<pid_t>();
  EXPECT_EQ(free_before - HugepagesFree(), pages);

  RunResult m = MigrateOverSsh(d.name, RemoteQlaunch());
  ASSERT_EQ(m.exit_code, 0) << m.Describe();
  const json r = json::parse(m.out);
  EXPECT_EQ(r.at("status"), "completed") << m.out;
  const json& dest = r.at("destination");
  EXPECT_EQ(dest.at("ssh"), "ssh://root@127.0.0.1:" + std::to_string(port_)) << m.out;
  const std::string incoming = dest.at("incoming").get<std::string>();
  ASSERT_EQ(incoming.rfind("tcp:0.0.0.0:", 0), 0u) << m.out;
  EXPECT_EQ(dest.at("uri"), "tcp:127.0.0.1:" + incoming.substr(12)) << m.out;
  EXPECT_EQ(r.at("uri"), dest.at("uri")) << m.out;
  EXPECT_TRUE(dest.at("timings_ms").contains("total")) << m.out;
  const pid_t dest_pid = dest.at("pid").get<pid_t>();

  // The source is released: its QEMU gone, its root empty; the destination holds the guest.
  for (int i = 0; i < 250 && !PidGone(source_pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(PidGone(source_pid));
  RunResult here = Qlaunch({"list", "--json"});
  EXPECT_EQ(here.out, "[]\n") << here.Describe();
  RunResult there = Qlaunch({"list", "--json"}, DestEnv());
  ASSERT_EQ(there.exit_code, 0) << there.Describe();
  const json listed = json::parse(there.out);
  ASSERT_EQ(listed.size(), 1u) << there.out;
  EXPECT_EQ(listed.at(0).at("name"), d.name);
  // incoming until QEMU there has loaded the guest (list settles it), a moment after the source is done
  std::string state = listed.at(0).value("state", "");
  for (int i = 0; i < 250 && state == "incoming"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    state = json::parse(Qlaunch({"list", "--json"}, DestEnv()).out).at(0).value("state", "");
  }
  EXPECT_EQ(state, "running") << there.out;
  EXPECT_FALSE(PidGone(dest_pid));
  EXPECT_EQ(free_before - HugepagesFree(), pages) << "one guest's worth of pages, the destination's";
  // The destination's domain.xml is the live XML that went over stdin.
  EXPECT_NE(Slurp(DestRoot() / d.name / "domain.xml").find("<name>" + d.name + "</name>"), std::string::npos);

  RunResult destroy = Qlaunch({"destroy", d.name}, DestEnv());
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  for (int i = 0; i < 250 && !PidGone(dest_pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(PidGone(dest_pid));
  EXPECT_EQ(HugepagesFree(), free_before);
  StopSshd();
}

TEST_F(MigrateSshTest, ADestinationThatCannotStartLeavesTheSourceAsItWas) {
  SmallDomain d;
  d.name = "mig-ssh-fail";
  const uint64_t pages = d.Bytes() / (2u << 20);
  HugepagePool pool = HugepagePool::Exactly(pages + 2);  // the source fits, a second copy does not
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  RunResult start = Qlaunch({"start", "--json", WriteDomain(d)});
  ASSERT_EQ(start.exit_code, 0) << start.Describe();
  const pid_t source_pid = json::parse(start.out).at("pid").get<pid_t>();

  RunResult m = MigrateOverSsh(d.name, RemoteQlaunch());
  EXPECT_EQ(m.exit_code, 1) << m.Describe();
  EXPECT_NE(m.err.find("preparing the destination ssh://root@127.0.0.1:"), std::string::npos) << m.err;
  EXPECT_NE(m.err.find("not enough 2 MiB hugepages"), std::string::npos) << m.err;  // the remote's own words
  EXPECT_NE(m.err.find("nothing was started"), std::string::npos) << m.err;
  RunResult no_qlaunch = MigrateOverSsh(d.name, "false");
  EXPECT_EQ(no_qlaunch.exit_code, 1) << no_qlaunch.Describe();
  EXPECT_NE(no_qlaunch.err.find("(false start exited 1)"), std::string::npos) << no_qlaunch.err;

  // The source as before: running, its pages held, the destination's root empty.
  EXPECT_FALSE(PidGone(source_pid));
  RunResult here = Qlaunch({"list", "--json"});
  ASSERT_EQ(here.exit_code, 0) << here.Describe();
  EXPECT_EQ(json::parse(here.out).at(0).at("state"), "running") << here.out;
  EXPECT_EQ(free_before - HugepagesFree(), pages);
  RunResult there = Qlaunch({"list", "--json"}, DestEnv());
  EXPECT_EQ(there.out, "[]\n") << there.Describe();
  RunResult destroy = Qlaunch({"destroy", d.name});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  ExpectHostClean(d.name, source_pid, free_before);
}

// The destination's QEMU dies half-way: migrate fails saying so, the source runs on untouched, and
// the destination prepared over ssh is torn down over ssh (its QEMU has ended; the remote destroy
// clears its state, which nothing else on that root would).
TEST_F(MigrateSshTest, ADestinationThatDiesMidMigrationIsClearedOverSshAndTheSourceRunsOn) {
  ASSERT_NO_FATAL_FAILURE(BreakHalfWay("mig-ssh-dies"));
  if (IsSkipped()) return;

  ASSERT_EQ(::kill(brk_.dest, SIGKILL), 0);
  RunResult r = brk_.migrate->Wait(std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("migration of domain " + brk_dom_.name + " to tcp:127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the domain stays here (running)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the destination " + SshUri() + " had ended already, nothing of it is left there"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");

  ExpectOnlyTheSourceLeft();
}

// SIGINT to migrate half-way: migrate_cancel, the source runs on, and the destination prepared over
// ssh is destroyed over ssh (or, had its QEMU already ended on the cut stream, its state cleared).
TEST_F(MigrateSshTest, SigintCancelsAndTheDestinationPreparedOverSshGoes) {
  ASSERT_NO_FATAL_FAILURE(BreakHalfWay("mig-ssh-int"));
  if (IsSkipped()) return;

  ASSERT_EQ(::kill(brk_.migrate->pid(), SIGINT), 0);
  RunResult r = brk_.migrate->Wait(std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("migration of domain " + brk_dom_.name + " to tcp:127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cancelled: interrupted by SIGINT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the domain stays here (running)"), std::string::npos) << r.err;
  const bool destroyed = r.err.find("the destination " + SshUri() + " was destroyed again") != std::string::npos;
  const bool ended = r.err.find("the destination " + SshUri() + " had ended already") != std::string::npos;
  EXPECT_TRUE(destroyed || ended) << r.err;
  EXPECT_EQ(r.out, "");

  ExpectOnlyTheSourceLeft();
}

// The confirm phase: QEMU has said completed (the destination loaded the guest and runs it, the
// return path), and the destination dies before migrate has heard from it over ssh (the remote
// qlaunch, a wrapper here, kills its QEMU when asked for dominfo). The source, paused at the
// switch-over with all it had, takes the guest back and runs on; the dead destination is cleared.
// A source paused before (`paused`) stays paused, listed so; its disks went to the destination,
// so save refuses until a resume takes them back.
void MigrateSshTest::DiesBeforeItConfirms(const std::string& name, bool paused) {
  SmallDomain d;
  d.name = name;
  const uint64_t pages = d.Bytes() / (2u << 20);
  HugepagePool pool = HugepagePool::AtLeast(2 * pages + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  RunResult start = Qlaunch({"start", "--json", WriteDomain(d)});
  ASSERT_EQ(start.exit_code, 0) << start.Describe();
  const pid_t source_pid = json::parse(start.out).at("pid").get<pid_t>();
  if (paused) {
    ASSERT_EQ(Qlaunch({"suspend", d.name}).exit_code, 0);
  }

  const fs::path killer = tmp() / "remote-qlaunch", killed = tmp() / "killed.pid";
  const std::string pid_file = (DestRoot() / d.name / "pid").string();
  std::ofstream(killer) << "#!/bin/sh\n"
                        << "if [ \"$1\" = dominfo ]; then\n"
                        << "  pid=$(cat " << pid_file << ")\n"
                        << "  kill -9 \"$pid\" && echo \"$pid\" >" << killed.string() << "\n"
                        << "  while [ -e /proc/$pid ] && ! grep -q '^State:.*Z' /proc/$pid/status; do sleep 0.05; done\n"
                        << "fi\n"
                        << "exec " << RemoteQlaunch() << " \"$@\"\n";
  fs::permissions(killer, fs::perms::owner_all);

  RunResult m = MigrateOverSsh(d.name, killer.string());
  EXPECT_EQ(m.exit_code, 1) << m.Describe();
  EXPECT_NE(m.err.find("completed, but the destination does not have the guest"), std::string::npos) << m.err;
  EXPECT_NE(m.err.find(paused ? "the domain stays here (paused)" : "the domain stays here (running)"),
            std::string::npos) << m.err;
  EXPECT_NE(m.err.find("had ended already"), std::string::npos) << m.err;
  EXPECT_EQ(m.out, "");
  const pid_t dest_pid = std::atoi(Slurp(killed).c_str());
  ASSERT_GT(dest_pid, 0) << "the destination was never asked to confirm";
  EXPECT_NE(dest_pid, source_pid);

  ExpectDestinationGone(d.name, dest_pid);
  if (paused) {
    RunResult info = Qlaunch({"dominfo", "--json", d.name});
    ASSERT_EQ(info.exit_code, 0) << info.Describe();
    EXPECT_EQ(json::parse(info.out).value("state", ""), "paused") << info.out;
    RunResult save = Qlaunch({"save", d.name, (tmp() / "refused.sav").string()});
    EXPECT_EQ(save.exit_code, 1) << save.Describe();
    EXPECT_NE(save.err.find("released its disks to that destination; resume it first"), std::string::npos) << save.err;
    EXPECT_FALSE(fs::exists(tmp() / "refused.sav"));
    RunResult resume = Qlaunch({"resume", d.name});
    EXPECT_EQ(resume.exit_code, 0) << resume.Describe();
  }
  ExpectSourceRunsOn(d.name, source_pid);
  EXPECT_EQ(free_before - HugepagesFree(), pages) << "only the source's pages are taken";
  RunResult destroy = Qlaunch({"destroy", d.name});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  ExpectHostClean(d.name, source_pid, free_before);
  StopSshd();
}

TEST_F(MigrateSshTest, ADestinationThatDiesBeforeItConfirmsLeavesTheSourceRunning) {
  DiesBeforeItConfirms("mig-ssh-confirm", false);
}

TEST_F(MigrateSshTest, APausedSourceWhoseDestinationDiesBeforeItConfirmsStaysPausedUntilResumed) {
  DiesBeforeItConfirms("mig-ssh-confirm-p", true);
}

class StartFromStdinTest : public LaunchTest {};

TEST_F(StartFromStdinTest, ReadsTheXmlFromStdinAndNamesItInErrors) {
  const std::string cmd = "printf '<domain type=\"qemu\">\\n<name>x</name>\\n<memory>oops</memory>\\n</domain>\\n' | " +
                          QlaunchBinary() + " start --incoming tcp:127.0.0.1:0 -";
  RunResult r = RunningProcess({"/bin/sh", "-c", cmd}, BaseEnv()).Wait();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("<stdin>:3"), std::string::npos) << r.err;
  RunResult empty = Qlaunch({"start", "--incoming", "tcp:127.0.0.1:0", "-"});  // stdin: /dev/null
  EXPECT_EQ(empty.exit_code, 1) << empty.Describe();
  EXPECT_NE(empty.err.find("<stdin>: no domain XML on standard input"), std::string::npos) << empty.err;
  RunResult missing = Qlaunch({"start", (tmp() / "nope.xml").string()});  // an error naming it, not usage
  EXPECT_EQ(missing.exit_code, 1) << missing.Describe();
  EXPECT_NE(missing.err.find("cannot read " + (tmp() / "nope.xml").string()), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace qlaunch::testing
