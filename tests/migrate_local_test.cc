// `qlaunch migrate NAME --local` on QEMU 7.2 under TCG (issue 18): a new QEMU takes over a running
// domain on this host, the guest's shared hugetlb memory handed over by fd (x-ignore-shared), not
// copied. The guest has no OS; its memory is filled with random bytes through its memfds, so a
// copy of it would show in QEMU's figures and its digest proves nothing was lost.
//   - the swap of a paused domain: a new pid, unprivileged, in the domain's cgroup, the same memory
//     bytes, no page taken from the pool, almost nothing sent, still paused, then resumed; a second
//     swap, of the running domain; destroy then leaves nothing;
//   - QEMU 5.2 replaced by 7.2 under a running domain (an upgrade), memory handed over alike;
//   - a domain on warm pool files (issue 38): the files handed over alike, still in use after the
//     swap, dirty at its end and scrubbed warm;
//   - refusals with the domain untouched: shared memory QEMU made itself (--prealloc qemu), a
//     domain under `qlaunch run`, a URI given with --local.
#include <functional>
#include <thread>

#include "support/guest_memory.h"
#include "support/launch_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class MigrateLocalTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = WhyNoHugepageQemu72(); !why.empty()) GTEST_SKIP() << why;
    dom_.name = "qlaunch-swap";
    dom_.type = kFilledGuestType;
    dom_.cells = 2;
    dom_.cell_mib = 64;
    pool_.emplace(HugepagePool::AtLeast(dom_.Bytes() / (2u << 20) + 8));
    ASSERT_TRUE(pool_->ok()) << pool_->error();
    free_before_ = HugepagesFree();
  }

  void TearDown() override {
    Qlaunch({"destroy", dom_.name});
    LaunchTest::TearDown();
  }

  pid_t Start(const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"start", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(WriteDomain(dom_));
    RunResult s = Qlaunch(args);
    EXPECT_EQ(s.exit_code, 0) << s.Describe();
    return nlohmann::json::parse(s.out, nullptr, false).value("pid", 0);
  }

  std::string Status() {
    RunResult r = Qlaunch({"qemu-monitor-command", dom_.name, R"({"execute":"query-status"})"});
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    if (!j.is_object() || !j.contains("return")) return "(" + r.Describe() + ")";
    return j["return"].value("status", "");
  }

  SmallDomain dom_;
  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
};

// Paused, so that the guest (SeaBIOS under TCG) changes none of its memory while the digests are
// taken; it then stays paused through the swap (the run state travels with the stream) and runs
// when resumed. The second swap is of the running domain.
TEST_F(MigrateLocalTest, ANewQemuTakesOverWithTheSameMemoryAndNoCopy) {
  const pid_t old_pid = Start();
  ASSERT_EQ(Qlaunch({"suspend", dom_.name}).exit_code, 0);
  ASSERT_EQ(FillQemuMemfds(old_pid, dom_.name, 7), 2);
  const std::string digest = DigestQemuMemfds(old_pid, dom_.name);
  const uint64_t pages = dom_.Bytes() / (2u << 20);
  ASSERT_EQ(HugepagesFree(), free_before_ - pages);
  const auto ns = [](pid_t p) { return fs::read_symlink("/proc/" + std::to_string(p) + "/ns/mnt").string(); };
  const std::string old_id = QemuIdOf(old_pid), old_ns = ns(old_pid);

  RunResult m = Qlaunch({"migrate", dom_.name, "--local", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.Describe();
  const nlohmann::json j = nlohmann::json::parse(m.out, nullptr, false);
  const pid_t new_pid = j.value("new_pid", 0);
  EXPECT_EQ(j.value("old_pid", 0), old_pid);
  EXPECT_NE(new_pid, old_pid);
  EXPECT_EQ(j.value("handed_over_bytes", uint64_t{0}), dom_.Bytes());
  // 128 MiB of random bytes would be 128 MiB on the wire; device state is well under 1 MiB.
  EXPECT_LT(j.value("ram_transferred_bytes", uint64_t{1} << 40), uint64_t{1} << 20) << m.out;
  EXPECT_GE(j.value("downtime_ms", -1.0), 0.0);

  EXPECT_TRUE(PidGone(old_pid));
  EXPECT_EQ(Status(), "paused");
  EXPECT_EQ(Slurp(DomainStateDir(dom_.name) / "pid"), std::to_string(new_pid) + "\n");
  EXPECT_EQ(DigestQemuMemfds(new_pid, dom_.name), digest);
  EXPECT_EQ(HugepagesFree(), free_before_ - pages);  // the same pages, none more
  ExpectUnprivileged(new_pid);
  // The domain's ids (its lease) and a mount namespace of its own, as the old QEMU had.
  EXPECT_EQ(QemuIdOf(new_pid), old_id);
  EXPECT_NE(ns(new_pid), ns(::getpid()));
  EXPECT_NE(ns(new_pid), old_ns);
  // The domain's cgroup (its path ends in "/<name>"; /proc/PID/cgroup's v2 line in "::/.../<name>").
  std::string cgroup = Slurp(DomainStateDir(dom_.name) / "cgroup");
  if (!cgroup.empty()) {
    cgroup.pop_back();
    const std::string leaf = cgroup.substr(cgroup.rfind('/'));
    EXPECT_NE(Slurp("/proc/" + std::to_string(new_pid) + "/cgroup").find(leaf + "\n"), std::string::npos)
        << "new QEMU not in " << cgroup;
  }
  ASSERT_EQ(Qlaunch({"resume", dom_.name}).exit_code, 0);
  EXPECT_EQ(Status(), "running");

  // Again, running, from the swapped QEMU: the memfds it got are qlaunch's as much as the first.
  RunResult again = Qlaunch({"migrate", dom_.name, "--local", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  const pid_t third = nlohmann::json::parse(again.out, nullptr, false).value("new_pid", 0);
  EXPECT_EQ(Status(), "running");
  EXPECT_EQ(HugepagesFree(), free_before_ - pages);

  EXPECT_EQ(Qlaunch({"destroy", dom_.name}).exit_code, 0);
  ExpectHostClean(dom_.name, third, free_before_);
  EXPECT_TRUE(PidGone(new_pid));
}

// A QEMU upgrade under the guest: started on QEMU 5.2 (machine pc-i440fx-5.2, which 7.2 still
// provides), swapped to 7.2 with its memory handed over.
TEST_F(MigrateLocalTest, AnOlderQemuIsReplacedByANewerOne) {
  if (std::string why = CheckQemuVersion(kQemu52, "5.2"); !why.empty()) GTEST_SKIP() << why;
  dom_.emulator = kQemu52;
  dom_.machine = "pc-i440fx-5.2";
  const pid_t old_pid = Start();
  ASSERT_EQ(Qlaunch({"suspend", dom_.name}).exit_code, 0);
  ASSERT_EQ(FillQemuMemfds(old_pid, dom_.name, 11), 2);
  const std::string digest = DigestQemuMemfds(old_pid, dom_.name);
  RunResult m = Qlaunch({"migrate", dom_.name, "--local", "--qemu", kQemu72, "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.Describe();
  const pid_t new_pid = nlohmann::json::parse(m.out, nullptr, false).value("new_pid", 0);
  EXPECT_LT(nlohmann::json::parse(m.out, nullptr, false).value("ram_transferred_bytes", uint64_t{1} << 40),
            uint64_t{1} << 20);
  EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(new_pid) + "/exe").string(), kQemu72);
  EXPECT_EQ(DigestQemuMemfds(new_pid, dom_.name), digest);
  RunResult v = Qlaunch({"qemu-monitor-command", dom_.name, R"({"execute":"query-version"})"});
  EXPECT_NE(v.out.find(R"("major":7)"), std::string::npos) << v.out;
  ASSERT_EQ(Qlaunch({"resume", dom_.name}).exit_code, 0);
  EXPECT_EQ(Status(), "running");
  EXPECT_EQ(Qlaunch({"destroy", dom_.name}).exit_code, 0);
  ExpectHostClean(dom_.name, new_pid, free_before_);
  EXPECT_TRUE(PidGone(old_pid));
}

// Started on warm files of the pool (its own directory), not memfds: the same files go to the new
// QEMU, stay the domain's (in use) through the swap, and go dirty, then warm, only at its end.
TEST_F(MigrateLocalTest, WarmPoolFilesAreHandedOverAndKeptInUse) {
  if (!fs::is_directory("/dev/hugepages")) GTEST_SKIP() << "no hugetlbfs mounted at /dev/hugepages";
  const std::string pool = "qlaunch-test-swap-" + std::to_string(::getpid());
  const Env env{{"QLAUNCH_POOL_DIR", pool}, {"QLAUNCH_POOL_TARGETS", (tmp() / "targets").string()}};
  const fs::path pool_dir = fs::path("/dev/hugepages") / pool;
  struct AtEnd {
    std::function<void()> fn;
    ~AtEnd() { fn(); }
  } drain{[&] {  // whatever the test did, nothing of the pool is left
    Qlaunch({"destroy", dom_.name}, env);
    Qlaunch({"pool", "drain"}, env);
    std::error_code ec;
    fs::remove_all(pool_dir, ec);
  }};
  // The pool's files in state `state` ("warm.", "use.", ...).
  const auto files_in = [&](const std::string& state) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(pool_dir, ec))
      if (e.path().filename().string().starts_with(state)) out.push_back(e.path().filename().string());
    return out;
  };
  const std::string xml = WriteDomain(dom_);
  RunResult fill = Qlaunch({"pool", "fill", xml}, env);
  ASSERT_EQ(fill.exit_code, 0) << fill.Describe();
  ASSERT_EQ(files_in("warm.").size(), 2u);
  RunResult started = Qlaunch({"start", "--json", xml}, env);
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  const nlohmann::json sj = nlohmann::json::parse(started.out, nullptr, false);
  EXPECT_EQ(sj["memory_sources"], (nlohmann::json{{"ram-node0", "warm"}, {"ram-node1", "warm"}})) << started.out;
  const pid_t old_pid = sj.value("pid", 0);
  const uint64_t free_with_guest = HugepagesFree();

  ASSERT_EQ(Qlaunch({"suspend", dom_.name}, env).exit_code, 0);
  const fs::path dir = DomainStateDir(dom_.name);
  ASSERT_EQ(FillQemuMemfds(old_pid, dom_.name, 13, dir), 2) << "QEMU holds both warm files";
  const std::string digest = DigestQemuMemfds(old_pid, dom_.name, dir);
  const std::vector<std::string> in_use = files_in("use.");
  ASSERT_EQ(in_use.size(), 2u);

  RunResult m = Qlaunch({"migrate", dom_.name, "--local", "--json"}, env);
  ASSERT_EQ(m.exit_code, 0) << m.Describe();
  const nlohmann::json j = nlohmann::json::parse(m.out, nullptr, false);
  const pid_t new_pid = j.value("new_pid", 0);
  EXPECT_EQ(j.value("handed_over_bytes", uint64_t{0}), dom_.Bytes());
  EXPECT_LT(j.value("ram_transferred_bytes", uint64_t{1} << 40), uint64_t{1} << 20) << m.out;
  EXPECT_TRUE(PidGone(old_pid));
  EXPECT_EQ(DigestQemuMemfds(new_pid, dom_.name, dir), digest) << "the new QEMU holds the same files, bytes intact";
  EXPECT_EQ(files_in("use."), in_use) << "still the domain's";
  EXPECT_TRUE(files_in("dirty.").empty());
  EXPECT_EQ(HugepagesFree(), free_with_guest) << "no page taken or given back";
  ASSERT_EQ(Qlaunch({"resume", dom_.name}, env).exit_code, 0);
  EXPECT_EQ(Status(), "running");

  EXPECT_EQ(Qlaunch({"destroy", dom_.name}, env).exit_code, 0);
  EXPECT_TRUE(files_in("use.").empty()) << "dirty at the domain's end";
  // destroy started the detached scrubber: both files warm again.
  for (int i = 0; i < 1500 && files_in("warm.").size() < 2; ++i) std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(files_in("warm.").size(), 2u);
  EXPECT_TRUE(files_in("dirty.").empty() && files_in("scrub.").empty());
}

TEST_F(MigrateLocalTest, RefusedWithTheDomainUntouched) {
  // Shared memory QEMU made and filled itself: nothing qlaunch could hand over.
  const pid_t pid = Start({"--prealloc", "qemu"});
  RunResult m = Qlaunch({"migrate", dom_.name, "--local"});
  EXPECT_EQ(m.exit_code, 1) << m.Describe();
  EXPECT_NE(m.err.find("shared memory backend ram-node0 that is not one of qlaunch's memfds or warm files"), std::string::npos)
      << m.err;
  EXPECT_NE(m.err.find("the domain runs on as it is"), std::string::npos) << m.err;
  EXPECT_EQ(Status(), "running");
  EXPECT_EQ(Slurp(DomainStateDir(dom_.name) / "pid"), std::to_string(pid) + "\n");
  EXPECT_FALSE(fs::exists(DomainStateDir(dom_.name) / "qmp-swap.sock"));
  EXPECT_EQ(LivePidsWithCmdline("guest=" + dom_.name).size(), 1u);

  RunResult uri = Qlaunch({"migrate", dom_.name, "unix:/tmp/x.sock", "--local"});
  EXPECT_EQ(uri.exit_code, 2);  // a usage error
  EXPECT_NE(uri.err.find("--local takes no URI"), std::string::npos) << uri.err;
  EXPECT_EQ(Qlaunch({"destroy", dom_.name}).exit_code, 0);
  ExpectHostClean(dom_.name, pid, free_before_);

  // Under `qlaunch run`: its supervisor watches the QEMU that would go.
  RunningProcess run({QlaunchBinary(), "run", WriteDomain(dom_)}, BaseEnv());
  for (int i = 0; i < 300 && Status() != "running"; ++i) std::this_thread::sleep_for(milliseconds(100));
  RunResult supervised = Qlaunch({"migrate", dom_.name, "--local"});
  EXPECT_EQ(supervised.exit_code, 1);
  EXPECT_NE(supervised.err.find("runs under `qlaunch run`"), std::string::npos) << supervised.err;
  EXPECT_EQ(Status(), "running");
  EXPECT_EQ(Qlaunch({"destroy", dom_.name}).exit_code, 0);
  run.Wait(milliseconds(30000));
}

}  // namespace
}  // namespace qlaunch::testing
