// SIGINT/SIGTERM to `qlaunch save` and `qlaunch restore` half-way, on real QEMU 7.2 (TCG), with
// nothing lost: a cancelled save leaves the domain as it was (running or paused, same QEMU, same
// memory, same hugepages) and no FILE; a cancelled restore leaves no domain (no QEMU, no state dir,
// every hugepage back) and FILE as it was, so the next restore of it brings the guest back.
//
// The guest has no OS; its memory is filled with random bytes through its memfds, so QEMU's stream
// is at least as long as the guest's memory. Writing or reading it takes a fraction of a second, so
// the test freezes QEMU (SIGSTOP) once it is seen mid-stream (FILE grown past its header, or QEMU's
// fd on FILE read past the stream's start and short of its end), signals qlaunch, and lets QEMU go
// on (SIGCONT): the signal lands while QEMU is provably in the middle of the stream. Nothing else
// talks to QEMU meanwhile (its QMP socket serves one client; qlaunch's is waiting on it).
// QEMU 7.2 loads a stream from a file without returning to its main loop, so the restore hears
// from QEMU again only once all is loaded: the signal must still undo it then.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/guest_memory.h"
#include "support/launch_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kName = "sr-sig";

// The u64 little-endian at `at` of `path` (save_file.h's header); 0 when the file is shorter.
uint64_t ReadU64(const std::string& path, uint64_t at) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(at));
  unsigned char b[8] = {};
  if (!in.read(reinterpret_cast<char*>(b), 8)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{b[i]} << (8 * i);
  return v;
}

uint64_t SizeOf(const std::string& path) {
  std::error_code ec;
  const uintmax_t n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(n);
}

// FNV-1a of a whole file ("" when it cannot be read).
std::string FileDigest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  uint64_t h = 1469598103934665603ull;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
  }
  return std::to_string(h);
}

// The offset of QEMU `pid`'s fd on `file` ("pos:" of /proc/PID/fdinfo); nullopt when it has none.
std::optional<uint64_t> QemuFilePos(pid_t pid, const fs::path& file) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code lec;
    if (fs::read_symlink(e.path(), lec) != file) continue;
    const std::string info = Slurp("/proc/" + std::to_string(pid) + "/fdinfo/" + e.path().filename().string());
    const size_t at = info.find("pos:");
    if (at != std::string::npos) return std::stoull(info.substr(at + 4));
  }
  return std::nullopt;
}

class SaveRestoreSignalTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = WhyNoHugepageQemu72(); !why.empty()) GTEST_SKIP() << why;
    domain_.name = kName;
    domain_.type = kFilledGuestType;
    domain_.emulator = kQemu72;
    domain_.cells = 2;
    domain_.cell_mib = 128;
    pool_.emplace(HugepagePool::AtLeast(domain_.Bytes() / (2u << 20) + 8));
    ASSERT_TRUE(pool_->ok()) << pool_->error();
    free_before_ = HugepagesFree();
    file_ = (fs::canonical(tmp()) / "sr.save").string();
  }
  void TearDown() override {
    for (pid_t p : stopped_) ::kill(p, SIGCONT);  // an assertion left one frozen
    if (fs::exists(DomainStateDir(kName))) Qlaunch({"destroy", kName});
    LaunchTest::TearDown();
  }

  // Started, its memory random: QEMU's pid.
  pid_t StartFilled() {
    RunResult r = Qlaunch({"start", "--json", WriteDomain(domain_)});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (r.exit_code != 0) return 0;
    const pid_t pid = json::parse(r.out).at("pid").get<pid_t>();
    EXPECT_EQ(FillQemuMemfds(pid, kName, 18), 2) << "QEMU's memfds of " << kName;
    return pid;
  }
  std::string Query(const std::string& command, const std::string& key) {
    RunResult r = Qlaunch({"qemu-monitor-command", kName, R"({"execute":")" + command + R"("})"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return r.exit_code == 0 ? json::parse(r.out).at("return").value(key, "") : "";
  }
  std::pair<std::string, pid_t> Listed() {
    RunResult r = Qlaunch({"list", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    for (const json& d : json::parse(r.out, nullptr, false))
      if (d.value("name", "") == kName) return {d.value("state", ""), d["pid"].is_number() ? d["pid"].get<pid_t>() : 0};
    return {"", 0};
  }
  void Stop(pid_t qemu) {
    ASSERT_EQ(::kill(qemu, SIGSTOP), 0);
    stopped_.push_back(qemu);
  }
  // Signals `p` while QEMU is frozen, then lets QEMU go on.
  void SignalWhileFrozen(RunningProcess& p, pid_t qemu, int sig) {
    ASSERT_EQ(::kill(p.pid(), sig), 0);
    std::this_thread::sleep_for(milliseconds(200));  // its handler has run: it waits on QEMU
    ASSERT_EQ(::kill(qemu, SIGCONT), 0);
    stopped_.clear();
  }

  // `qlaunch save` of the domain (QEMU `qemu`) signalled with `sig` while QEMU writes its stream;
  // returns its result once it has ended.
  RunResult InterruptedSave(pid_t qemu, int sig) {
    RunningProcess save({QlaunchBinary(), "save", kName, file_}, BaseEnv());
    // QEMU writes past the header (its length is at offset 32 of the file; see save_file.h).
    uint64_t offset = 0;
    const auto end = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < end && (offset == 0 || SizeOf(file_) <= offset)) {
      if (offset == 0) offset = ReadU64(file_, 32);
      if (::kill(save.pid(), 0) != 0) break;
      std::this_thread::sleep_for(milliseconds(1));
    }
    EXPECT_GT(offset, 0u) << "no header in " << file_ << ": " << save.ErrSoFar();
    Stop(qemu);
    const uint64_t size = SizeOf(file_);
    EXPECT_GT(size, offset) << "QEMU had not begun its stream";
    EXPECT_LT(size, offset + domain_.Bytes()) << "QEMU had written all of the guest's memory already";
    SignalWhileFrozen(save, qemu, sig);
    return save.Wait(milliseconds(60000));
  }

  // After a cancelled save: the domain as it was, with its QEMU and its hugepages, and no FILE.
  void ExpectSaveUndone(const RunResult& r, const char* signame, const std::string& state, pid_t qemu) {
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(std::string("save of domain ") + kName + " to " + file_ + " cancelled: interrupted by " +
                         signame),
              std::string::npos)
        << r.Describe();
    EXPECT_NE(r.err.find(file_ + " removed, the domain stays " + state), std::string::npos) << r.Describe();
    EXPECT_FALSE(fs::exists(file_)) << "the partial save file is left";
    EXPECT_EQ(Listed(), std::make_pair(state, qemu));
    EXPECT_EQ(Query("query-status", "status"), state);
    EXPECT_EQ(Query("query-migrate", "status"), "cancelled") << "not cancelled through migrate_cancel";
    EXPECT_FALSE(fs::exists(DomainStateDir(kName) / "migrating"));
    EXPECT_EQ(HugepagesFree(), free_before_ - domain_.Bytes() / (2u << 20));
  }

  SmallDomain domain_;
  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
  std::string file_;
  std::vector<pid_t> stopped_;
};

TEST_F(SaveRestoreSignalTest, SigintDuringSaveCancelsItAndTheGuestRunsOn) {
  const pid_t qemu = StartFilled();
  ASSERT_GT(qemu, 0);
  const RunResult r = InterruptedSave(qemu, SIGINT);
  ExpectSaveUndone(r, "SIGINT", "running", qemu);
  // Saved again, undisturbed, it is a save like any other.
  RunResult again = Qlaunch({"save", kName, file_});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  ExpectHostClean(kName, qemu, free_before_);
}

// A paused guest stays paused, and its memory is what it was, byte for byte.
TEST_F(SaveRestoreSignalTest, SigtermDuringSaveOfAPausedGuestLeavesItPausedAndIntact) {
  const pid_t qemu = StartFilled();
  ASSERT_GT(qemu, 0);
  ASSERT_EQ(Qlaunch({"suspend", kName}).exit_code, 0);
  const std::string digest = DigestQemuMemfds(qemu, kName);
  ASSERT_NE(digest, "");
  const RunResult r = InterruptedSave(qemu, SIGTERM);
  ExpectSaveUndone(r, "SIGTERM", "paused", qemu);
  EXPECT_EQ(DigestQemuMemfds(qemu, kName), digest) << "the guest's memory changed";
  ASSERT_EQ(Qlaunch({"resume", kName}).exit_code, 0);
  EXPECT_EQ(Query("query-status", "status"), "running");
  ASSERT_EQ(Qlaunch({"destroy", kName}).exit_code, 0);
  ExpectHostClean(kName, qemu, free_before_);
}

// SIGINT, then SIGTERM, each while QEMU loads the stream: nothing is left either time and FILE is
// untouched; the third restore brings the guest back.
TEST_F(SaveRestoreSignalTest, SignalDuringRestoreTearsTheHalfRestoredDomainDownAndKeepsTheFile) {
  const pid_t saved = StartFilled();
  ASSERT_GT(saved, 0);
  RunResult s = Qlaunch({"save", kName, file_});
  ASSERT_EQ(s.exit_code, 0) << s.Describe();
  ExpectHostClean(kName, saved, free_before_);
  const std::string digest = FileDigest(file_);
  const uint64_t offset = ReadU64(file_, 32), size = SizeOf(file_);
  ASSERT_GT(offset, 0u);
  ASSERT_GE(size, offset + domain_.Bytes());

  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    RunningProcess restore({QlaunchBinary(), "restore", file_}, BaseEnv());
    // The restored domain's QEMU, once its fd on FILE is read past the stream's start.
    pid_t qemu = 0;
    std::optional<uint64_t> pos;
    for (auto end = Clock::now() + std::chrono::seconds(60); Clock::now() < end;) {
      if (qemu == 0) {
        const std::string p = Slurp(DomainStateDir(kName) / "pid");
        if (!p.empty()) qemu = std::stoi(p);
      }
      if (qemu > 0 && (pos = QemuFilePos(qemu, file_)) && *pos > offset) break;
      if (::kill(restore.pid(), 0) != 0) break;
      std::this_thread::sleep_for(milliseconds(1));
    }
    ASSERT_GT(qemu, 0) << "no QEMU for the restore: " << restore.ErrSoFar();
    Stop(qemu);
    pos = QemuFilePos(qemu, file_);
    ASSERT_TRUE(pos.has_value()) << "QEMU holds no fd on " << file_;
    EXPECT_GT(*pos, offset) << "QEMU had not begun to read the stream";
    EXPECT_LT(*pos, size) << "QEMU had read the whole stream already";
    SignalWhileFrozen(restore, qemu, sig);
    RunResult r = restore.Wait(milliseconds(60000));
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")), std::string::npos)
        << r.Describe();
    ExpectQemuGone(qemu);
    ExpectNothingLeft(kName, free_before_);
    EXPECT_EQ(Listed().first, "");
    EXPECT_EQ(FileDigest(file_), digest) << file_ << " changed";
  }

  RunResult r = Qlaunch({"restore", "--json", file_});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const pid_t qemu = json::parse(r.out).at("pid").get<pid_t>();
  EXPECT_EQ(Listed(), std::make_pair(std::string("running"), qemu));
  EXPECT_EQ(Query("query-status", "status"), "running");
  ASSERT_EQ(Qlaunch({"destroy", kName}).exit_code, 0);
  ExpectHostClean(kName, qemu, free_before_);
}

}  // namespace
}  // namespace qlaunch::testing
