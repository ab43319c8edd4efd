// save and restore on real QEMU 7.2 (TCG), as `virsh save` / `virsh restore`: a small hugepage
// domain saved into a file is gone (QEMU, state dir, hugepages), restored it runs again with the
// same name; a paused one comes back paused; a file that is not a save file, one cut short and one
// whose stream QEMU cannot load are refused with nothing left; a save that cannot write its file
// leaves the domain running. A booted guest (tests/boot/hotplug-init) counts on after its restore.
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/hotplug_guest.h"
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class SaveRestoreTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    if (DefaultHugepageBytes() != (2u << 20)) GTEST_SKIP() << "these tests assume 2 MiB default hugepages";
    domain_.name = "sr";
    domain_.emulator = kQemu72;
    pool_.emplace(HugepagePool::AtLeast(domain_.Bytes() / (2u << 20) + 8));
    if (!pool_->ok()) GTEST_SKIP() << pool_->error();
    free_before_ = HugepagesFree();
    file_ = (tmp() / "sr.save").string();
  }
  void TearDown() override {
    if (fs::exists(DomainStateDir("sr"))) Qlaunch({"destroy", "sr"});
    LaunchTest::TearDown();
  }

  pid_t Start() {
    RunResult r = Qlaunch({"start", "--json", WriteDomain(domain_)});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return r.exit_code == 0 ? json::parse(r.out).at("pid").get<pid_t>() : 0;
  }
  std::string Status() {
    RunResult r = Qlaunch({"qemu-monitor-command", "sr", R"({"execute":"query-status"})"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return r.exit_code == 0 ? json::parse(r.out).at("return").value("status", "") : "";
  }
  std::string ListState() {
    RunResult r = Qlaunch({"list", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    for (const json& d : json::parse(r.out))
      if (d.value("name", "") == "sr") return d.value("state", "");
    return "";
  }
  // Saves the domain (QEMU `pid`) and checks it is gone with its hugepages; the save's JSON.
  json SaveAndCheckGone(pid_t pid) {
    RunResult r = Qlaunch({"save", "--json", "sr", file_});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (r.exit_code != 0) return json();
    ExpectHostClean("sr", pid, free_before_);
    EXPECT_EQ(ListState(), "");
    EXPECT_TRUE(fs::exists(file_));
    const json out = json::parse(r.out);
    EXPECT_EQ(out.at("file_bytes").get<uint64_t>(), fs::file_size(file_));
    EXPECT_GT(out.at("stream_bytes").get<uint64_t>(), 0u);
    return out;
  }
  void ExpectRefused(const std::string& file, const std::string& error) {
    RunResult r = Qlaunch({"restore", file});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(error), std::string::npos) << r.Describe();
    EXPECT_NE(r.err.find(file), std::string::npos) << "the error names the file: " << r.Describe();
    ExpectNothingLeft("sr", free_before_);
  }

  SmallDomain domain_;
  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
  std::string file_;
};

TEST_F(SaveRestoreTest, SavedDomainIsGoneAndRestoredRunsAgain) {
  const pid_t pid = Start();
  ASSERT_GT(pid, 0);
  const json saved = SaveAndCheckGone(pid);
  EXPECT_EQ(saved.value("state", ""), "running");

  RunResult r = Qlaunch({"restore", "--json", file_});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const json out = json::parse(r.out);
  EXPECT_EQ(out.value("name", ""), "sr");
  EXPECT_EQ(out.value("state", ""), "running");
  EXPECT_GT(out.at("load_ms").get<double>(), 0.0);
  EXPECT_TRUE(out.at("timings_ms").contains("prealloc")) << out.dump();
  EXPECT_EQ(Status(), "running");
  EXPECT_EQ(ListState(), "running");
  EXPECT_LT(HugepagesFree(), free_before_) << "the restored guest holds its hugepages again";
  EXPECT_TRUE(fs::exists(file_)) << "restore leaves the file";
  // A restored domain is a domain like any other: saved again, restored again, destroyed.
  const pid_t pid2 = out.at("pid").get<pid_t>();
  SaveAndCheckGone(pid2);
  ASSERT_EQ(Qlaunch({"restore", file_}).exit_code, 0);
  EXPECT_EQ(Status(), "running");
  ASSERT_EQ(Qlaunch({"destroy", "sr"}).exit_code, 0);
  ExpectNothingLeft("sr", free_before_);
}

TEST_F(SaveRestoreTest, APausedGuestComesBackPaused) {
  const pid_t pid = Start();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(Qlaunch({"suspend", "sr"}).exit_code, 0);
  EXPECT_EQ(SaveAndCheckGone(pid).value("state", ""), "paused");
  RunResult r = Qlaunch({"restore", "--json", file_});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(json::parse(r.out).value("state", ""), "paused");
  EXPECT_EQ(Status(), "paused");
  EXPECT_EQ(ListState(), "paused");
  ASSERT_EQ(Qlaunch({"resume", "sr"}).exit_code, 0);
  EXPECT_EQ(Status(), "running");
}

TEST_F(SaveRestoreTest, FilesThatAreNoSaveOrAreDamagedAreRefusedWithNothingLeft) {
  ExpectRefused(WriteDomain(domain_), "not a qlaunch save file");
  ExpectRefused((tmp() / "none.save").string(), "No such file");

  const pid_t pid = Start();
  ASSERT_GT(pid, 0);
  SaveAndCheckGone(pid);
  std::string bytes;
  {
    std::ifstream in(file_, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string cut = (tmp() / "cut.save").string();
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  ExpectRefused(cut, "truncated");

  // The header intact, QEMU's stream not: QEMU 7.2 exits when it cannot load it.
  uint64_t offset = 0;
  for (int i = 0; i < 8; ++i) offset |= uint64_t{static_cast<unsigned char>(bytes[32 + i])} << (8 * i);
  ASSERT_LT(offset + 64, bytes.size());
  std::string broken = bytes;
  for (int i = 0; i < 64; ++i) broken[offset + i] = 'x';
  const std::string bad = (tmp() / "bad.save").string();
  std::ofstream(bad, std::ios::binary) << broken;
  ExpectRefused(bad, "failed");
}

TEST_F(SaveRestoreTest, ASaveThatCannotWriteLeavesTheDomainRunning) {
  const pid_t pid = Start();
  ASSERT_GT(pid, 0);
  const std::string nowhere = (tmp() / "no-such-dir" / "sr.save").string();
  RunResult r = Qlaunch({"save", "sr", nowhere});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("cannot create " + nowhere), std::string::npos) << r.Describe();
  EXPECT_EQ(Status(), "running");
  EXPECT_EQ(ListState(), "running");
  EXPECT_FALSE(fs::exists(nowhere));
}

// The guest's "tick N" counter (a shell variable in its memory, one a second) goes on after a
// restore where it stopped, as a fresh boot would not: it starts at 1 again.
TEST_F(SaveRestoreTest, ABootedGuestCountsOnAfterItsRestore) {
  const HotplugGuest guest = MakeHotplugGuest(tmp());
  if (!guest.missing.empty()) GTEST_SKIP() << guest.missing;
  const std::string xml = (tmp() / "sr-boot.xml").string();
  std::ofstream(xml) << "<domain type='qemu'>\n  <name>sr</name>\n  <memory unit='MiB'>256</memory>\n"
                     << "  <vcpu>1</vcpu>\n  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n" << guest.OsXml()
                     << "  </os>\n  <devices>\n" << guest.SerialXml()
                     << "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
  RunResult started = Qlaunch({"start", xml});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  auto tick = [&](const std::function<bool(int)>& ok) {
    const std::string v = guest.Report("tick", [&](const std::string& n) { return ok(std::stoi(n)); },
                                       std::chrono::seconds(120));
    return v.empty() ? 0 : std::stoi(v);
  };
  const int before = tick([](int n) { return n >= 5; });
  ASSERT_GE(before, 5) << "the guest never counted to 5";
  RunResult saved = Qlaunch({"save", "sr", file_});
  ASSERT_EQ(saved.exit_code, 0) << saved.Describe();
  const int at_save = tick([](int) { return true; });  // the last the saved guest wrote
  ASSERT_GE(at_save, before);
  RunResult restored = Qlaunch({"restore", file_});
  ASSERT_EQ(restored.exit_code, 0) << restored.Describe();
  // QEMU opened the serial file anew (truncated): what is in it now is the restored guest's.
  const int first = tick([](int) { return true; });
  EXPECT_GE(first, at_save) << "a fresh boot counts from 1";
  EXPECT_LE(first, at_save + 2) << "counted on from where it was saved";
  EXPECT_GT(tick([&](int n) { return n > first; }), first) << "the restored guest does not count on";
  EXPECT_EQ(Status(), "running");
}

}  // namespace
}  // namespace qlaunch::testing
