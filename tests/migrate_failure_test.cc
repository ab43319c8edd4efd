// Live migration failing for real (issue 18), on QEMU 7.2 under TCG with two state roots standing
// for two hosts: the source (the test's state root) and the destination (<tmp>/dest). The guest
// has no OS; its memory is filled with random bytes through its shared memfds, so the transfer,
// capped with --bandwidth 1 (MiB/s), takes long enough to break it half-way:
//   - SIGINT to `qlaunch migrate`: cancelled, the source runs on, the destination QEMU ends on
//     the cut stream and its state goes;
//   - the destination's QEMU killed: migrate fails saying so, the source runs on;
//   - the source's QEMU killed: migrate fails, the destination ends, nothing is left anywhere;
//   - the destination's QEMU killed with a tap and a disk image at both ends: only its own tap
//     goes, the image keeps the owner the running source needs;
//   - a source under `qlaunch run` that migrates away: run exits 6 and the guest runs on the
//     destination.
// After each: the free hugepages are what the surviving domain holds, no stray state.
#include <pwd.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "support/guest_memory.h"
#include "support/launch_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class MigrateFailureTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = WhyNoHugepageQemu72(); !why.empty()) GTEST_SKIP() << why;
    dom_.name = "qlaunch-mig";
    dom_.type = kFilledGuestType;
    dom_.cells = 2;
    dom_.cell_mib = 64;
    pool_.emplace(HugepagePool::AtLeast(2 * PagesOf(dom_) + 8));
    ASSERT_TRUE(pool_->ok()) << pool_->error();
    free_before_ = HugepagesFree();
    // QEMU (the domain's leased uid) makes the destination's socket: a directory it may write,
    // sticky as /tmp.
    sock_dir_ = tmp() / "sock";
    fs::create_directories(sock_dir_);
    ASSERT_EQ(::chmod(sock_dir_.c_str(), 01777), 0);
    uri_ = "unix:" + (sock_dir_ / "m.sock").string();
  }

  void TearDown() override {
    Qlaunch({"destroy", dom_.name});
    Qlaunch({"destroy", dom_.name}, Dest());
    LaunchTest::TearDown();
  }

  static uint64_t PagesOf(const SmallDomain& d) { return d.Bytes() / (2u << 20); }
  Env Dest() const { return {{"QLAUNCH_STATE_DIR", (tmp() / "dest").string()}}; }

  // The state `list --json` shows for the domain under `env` ("" when it is not listed), and its pid.
  std::pair<std::string, pid_t> Listed(const Env& env = {}) {
    RunResult r = Qlaunch({"list", "--json"}, env);
    nlohmann::json all = nlohmann::json::parse(r.out, nullptr, false);
    if (all.is_array())
      for (const auto& e : all)
        if (e.value("name", "") == dom_.name)
          return {e.value("state", ""), e["pid"].is_number() ? e["pid"].get<pid_t>() : 0};
    return {"", 0};
  }

  bool WaitListed(const std::string& state, const Env& env = {}, milliseconds limit = milliseconds(30000)) {
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      if (Listed(env).first == state) return true;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return false;
  }

  // Source started and filled, destination listening on uri_; the source's QEMU pid.
  pid_t StartBoth() {
    const std::string xml = WriteDomain(dom_);
    RunResult s = Qlaunch({"start", "--json", xml});
    EXPECT_EQ(s.exit_code, 0) << s.Describe();
    const pid_t src = nlohmann::json::parse(s.out, nullptr, false).value("pid", 0);
  const std::string qemu_owner = QemuIdOf(src) + ":" + QemuIdOf(src);  // the domain's leased ids
    EXPECT_EQ(FillQemuMemfds(src, dom_.name, 42), 2) << "QEMU's memfds of " << dom_.name;
    RunResult d = Qlaunch({"start", "--incoming", uri_, "--json", xml}, Dest());
    EXPECT_EQ(d.exit_code, 0) << d.Describe();
    EXPECT_EQ(nlohmann::json::parse(d.out, nullptr, false).value("incoming", ""), uri_) << d.out;
    EXPECT_EQ(Listed(Dest()).first, "incoming");
    EXPECT_EQ(HugepagesFree(), free_before_ - 2 * PagesOf(dom_));
    // A domain of the same name under another root (this host's stand-in for a second host) gets
    // a cgroup of its own: the source's release can remove its cgroup at once.
    const std::string cg_src = Slurp(DomainStateDir(dom_.name) / "cgroup");
    if (!cg_src.empty()) {
      EXPECT_NE(Slurp(tmp() / "dest" / dom_.name / "cgroup"), cg_src);
    }
    return src;
  }

  std::unique_ptr<RunningProcess> SlowMigrate() {
    Env env = BaseEnv();
    auto p = std::make_unique<RunningProcess>(
        std::vector<std::string>{QlaunchBinary(), "migrate", dom_.name, uri_, "--bandwidth", "1"}, env);
    EXPECT_TRUE(WaitListed("migrating")) << p->ErrSoFar();
    std::this_thread::sleep_for(milliseconds(1500));  // well into the copy (128 MiB at 1 MiB/s)
    return p;
  }

  // The destination is gone (its QEMU ended on the cut stream), the source runs, one guest's pages.
  void ExpectSourceRunsAlone(pid_t src) {
    EXPECT_TRUE(WaitListed("", Dest())) << "the destination is still listed: " << Listed(Dest()).first;
    EXPECT_FALSE(fs::exists(tmp() / "dest" / dom_.name));
    const auto [state, pid] = Listed();
    EXPECT_EQ(state, "running");
    EXPECT_EQ(pid, src);
    EXPECT_EQ(HugepagesFree(), free_before_ - PagesOf(dom_));
    RunResult again = Qlaunch({"qemu-monitor-command", dom_.name, R"({"execute":"query-status"})"});
    EXPECT_NE(again.out.find("\"running\""), std::string::npos) << again.Describe();
  }

  SmallDomain dom_;
  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
  fs::path sock_dir_;
  std::string uri_;
};

TEST_F(MigrateFailureTest, SigintCancelsTheMigrationAndTheSourceRunsOn) {
  const pid_t src = StartBoth();
  auto migrate = SlowMigrate();
  ::kill(migrate->pid(), SIGINT);
  RunResult r = migrate->Wait(milliseconds(30000));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("cancelled: interrupted by SIGINT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the domain stays here (running)"), std::string::npos) << r.err;
  ExpectSourceRunsAlone(src);
  EXPECT_EQ(Qlaunch({"destroy", dom_.name}).exit_code, 0);
  ExpectHostClean(dom_.name, src, free_before_);
}

TEST_F(MigrateFailureTest, ADestinationThatDiesLeavesTheSourceRunning) {
  const pid_t src = StartBoth();
  const pid_t dest = Listed(Dest()).second;
  ASSERT_GT(dest, 0);
  auto migrate = SlowMigrate();
  ::kill(dest, SIGKILL);
  RunResult r = migrate->Wait(milliseconds(60000));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("migration of domain " + dom_.name + " to " + uri_ + " failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the domain stays here (running)"), std::string::npos) << r.err;
  ExpectSourceRunsAlone(src);
  EXPECT_EQ(Qlaunch({"destroy", dom_.name}).exit_code, 0);
  ExpectHostClean(dom_.name, src, free_before_);
}

TEST_F(MigrateFailureTest, ASourceThatDiesTakesTheHalfLoadedDestinationWithIt) {
  const pid_t src = StartBoth();
  const pid_t dest = Listed(Dest()).second;
  auto migrate = SlowMigrate();
  ::kill(src, SIGKILL);
  RunResult r = migrate->Wait(milliseconds(60000));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  // The destination's QEMU ends on the cut stream; the next look at either root clears its state.
  EXPECT_TRUE(WaitListed("", Dest()));
  EXPECT_TRUE(WaitListed(""));
  EXPECT_TRUE(PidGone(dest));
  EXPECT_FALSE(fs::exists(tmp() / "dest" / dom_.name));
  ExpectHostClean(dom_.name, src, free_before_);
}

// With what each end makes on the host: a tap on a bridge (each end makes its own) and a disk image
// given to QEMU's user (shared storage: the same path at both ends). The destination is planned
// from the source's live XML, as a user moving a running guest has it. Its QEMU dies half-way:
// its tap goes, the source keeps its tap on the bridge and its image keeps the owner the source
// gave it; once the source is destroyed, no tap is left and the image is root's again.
TEST_F(MigrateFailureTest, ADestinationThatDiesTakesOnlyItsOwnTapAndTheImageKeepsItsOwner) {
  const char* bridge = "qlmigbr0";
  const fs::path brif = fs::path("/sys/class/net") / bridge / "brif";
  ASSERT_FALSE(fs::exists(brif.parent_path())) << bridge << " exists already";
  const std::string make = std::string("ip link add ") + bridge + " type bridge && ip link set " + bridge + " up";
  ASSERT_EQ(std::system(make.c_str()), 0);
  struct DelBridge {
    const char* name;
    ~DelBridge() { std::system((std::string("ip link del ") + name + " 2>/dev/null").c_str()); }
  } del_bridge{bridge};
  auto ports = [&] {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(brif, ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  auto owner = [](const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) : "(gone)";
  };
  const fs::path image = tmp() / "shared.raw";
  std::ofstream(image) << std::string(1 << 20, '\0');
  ASSERT_EQ(::chown(image.c_str(), 0, 0), 0);

  dom_.devices_extra = "    <disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='" +
                       image.string() + "'/><target dev='vda' bus='virtio'/></disk>\n"
                       "    <interface type='bridge'><source bridge='" + std::string(bridge) +
                       "'/><model type='virtio'/></interface>\n";
  RunResult s = Qlaunch({"start", "--json", WriteDomain(dom_)});
  ASSERT_EQ(s.exit_code, 0) << s.Describe();
  const pid_t src = nlohmann::json::parse(s.out, nullptr, false).value("pid", 0);
  const std::string qemu_owner = QemuIdOf(src) + ":" + QemuIdOf(src);  // the domain's leased ids
  const std::vector<std::string> source_tap = ports();
  ASSERT_EQ(source_tap.size(), 1u);
  EXPECT_EQ(owner(image), qemu_owner);
  ASSERT_EQ(FillQemuMemfds(src, dom_.name, 43), 2);

  RunResult live = Qlaunch({"dumpxml", dom_.name});
  ASSERT_EQ(live.exit_code, 0) << live.Describe();
  EXPECT_NE(live.out.find("<target dev=\"" + source_tap[0] + "\"/>"), std::string::npos) << live.out;
  const fs::path dest_xml = tmp() / "dest.xml";
  std::ofstream(dest_xml) << live.out;
  RunResult d = Qlaunch({"start", "--incoming", uri_, "--json", dest_xml.string()}, Dest());
  ASSERT_EQ(d.exit_code, 0) << d.Describe();
  const pid_t dest = nlohmann::json::parse(d.out, nullptr, false).value("pid", 0);
  ASSERT_EQ(ports().size(), 2u) << "the destination makes a tap of its own";

  auto migrate = SlowMigrate();
  ::kill(dest, SIGKILL);
  RunResult r = migrate->Wait(milliseconds(60000));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  ExpectSourceRunsAlone(src);
  EXPECT_EQ(ports(), source_tap) << "the destination's tap outlived it, or the source's went";
  EXPECT_EQ(owner(image), qemu_owner) << "the running source's image was given back under it";

  EXPECT_EQ(Qlaunch({"destroy", dom_.name}).exit_code, 0);
  ExpectHostClean(dom_.name, src, free_before_);
  EXPECT_EQ(ports(), std::vector<std::string>{});
  EXPECT_EQ(owner(image), "0:0");
}

TEST_F(MigrateFailureTest, ASourceUnderRunExitsSixWhenItsDomainMigratedAway) {
  const std::string xml = WriteDomain(dom_);
  RunningProcess run({QlaunchBinary(), "run", "--json", xml}, BaseEnv());
  ASSERT_TRUE(WaitListed("running")) << run.ErrSoFar();
  RunResult d = Qlaunch({"start", "--incoming", uri_, xml}, Dest());
  ASSERT_EQ(d.exit_code, 0) << d.Describe();
  RunResult m = Qlaunch({"migrate", dom_.name, uri_, "--live", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.Describe();
  RunResult r = run.Wait(milliseconds(30000));
  EXPECT_EQ(r.exit_code, 6) << r.Describe();
  EXPECT_NE(r.err.find("\"event\":\"migrated\""), std::string::npos) << r.err;
  EXPECT_EQ(Listed(Dest()).first, "running");
  EXPECT_EQ(Listed().first, "");
  EXPECT_EQ(HugepagesFree(), free_before_ - PagesOf(dom_));
  EXPECT_EQ(Qlaunch({"destroy", dom_.name}, Dest()).exit_code, 0);
  EXPECT_EQ(HugepagesFree(), free_before_);
}

// The destination under `qlaunch run --incoming`: the guest arrives and run goes on supervising it
// (a completed migration there is no reason to leave); destroyed by someone else, it exits 5.
TEST_F(MigrateFailureTest, ADestinationUnderRunSupervisesTheGuestThatArrived) {
  const std::string xml = WriteDomain(dom_);
  RunResult s = Qlaunch({"start", xml});
  ASSERT_EQ(s.exit_code, 0) << s.Describe();
  Env env = BaseEnv();
  env["QLAUNCH_STATE_DIR"] = (tmp() / "dest").string();
  RunningProcess run({QlaunchBinary(), "run", "--json", "--incoming", uri_, xml}, env);
  ASSERT_TRUE(WaitListed("incoming", Dest())) << run.ErrSoFar();
  RunResult m = Qlaunch({"migrate", dom_.name, uri_, "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.Describe();
  EXPECT_TRUE(WaitListed("running", Dest()));
  std::this_thread::sleep_for(milliseconds(1000));
  EXPECT_EQ(::waitpid(run.pid(), nullptr, WNOHANG), 0) << "run ended after the guest arrived: " << run.ErrSoFar();
  EXPECT_EQ(Qlaunch({"destroy", dom_.name}, Dest()).exit_code, 0);
  RunResult r = run.Wait(milliseconds(30000));
  EXPECT_EQ(r.exit_code, 5) << r.Describe();
  EXPECT_NE(r.err.find("\"status\":\"completed\""), std::string::npos) << r.err;
  EXPECT_EQ(HugepagesFree(), free_before_);
}

}  // namespace
}  // namespace qlaunch::testing
