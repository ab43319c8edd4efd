// The fixture of the tests that move a booted guest (tests/migrate_boot_test.cc,
// tests/verb_chain_test.cc): two "hosts" on this machine, two state roots (QLAUNCH_STATE_DIR), the
// source started as usual and a destination with `start --incoming URI` from the source's live
// XML (dumpxml, only the serial log's path changed). The guest (Debian's kernel, a busybox
// initramfs whose /init is tests/boot/migrate-init) fills 64 MiB of its RAM, reports its MD5, and
// counts on its serial port: a guest that moved goes on from the last count and sums its buffer to
// the same MD5. Two 128 MiB NUMA cells on shared 2 MiB hugetlb memfds, a raw virtio disk, a virtio
// NIC on user networking, under TCG (nested KVM guests hang in early boot here).
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/hotplug_guest.h"
#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {

class MigrateGuestTest : public LaunchTest {
 protected:
  using json = nlohmann::json;
  using seconds = std::chrono::seconds;
  static constexpr uint64_t MiB = 1ull << 20;
  static constexpr uint64_t kGuestPages = 128;  // 2 cells x 128 MiB on 2 MiB pages
  // Every test has the pool hold two guests' pages (source and destination), free, and the
  // migrate-init guest built, with a console log of its own on each side.
  void SetUp() override {
    LaunchTest::SetUp();
    if (IsSkipped()) return;
    if (DefaultHugepageBytes() != 2 * MiB) GTEST_SKIP() << "this test assumes 2 MiB default hugepages";
    source_ = MakeHotplugGuest(tmp(), "migrate-init");
    if (!source_.missing.empty()) GTEST_SKIP() << source_.missing;
    source_.serial = tmp() / "source-serial.log";
    dest_ = source_;
    dest_.serial = tmp() / "dest-serial.log";
    pool_.emplace(HugepagePool::Exactly(2 * kGuestPages));
    if (!pool_->ok()) GTEST_SKIP() << pool_->error();
  }
  void TearDown() override {
    LaunchTest::TearDown();
    pool_.reset();
  }
  HotplugGuest source_, dest_;
  std::optional<HugepagePool> pool_;
  // Of the guest BootSource started: the free pages before it, its QEMU's pid under root A, the
  // MD5 of its buffer.
  uint64_t free_before_ = 0;
  pid_t source_pid_ = 0;
  std::string sum_;

  Env B() { return OtherHost("b"); }

  // Starts `name` under root A (StateDir()) and waits for the guest's sum and a few counts.
  // `shape` may change the domain before it starts (more vCPUs, <features>, ...). With `defined`,
  // the XML is defined first and the domain started by its name.
  void BootSource(const std::string& name, const std::function<void(SmallDomain*)>& shape = {},
                  bool defined = false) {
    free_before_ = HugepagesFree();
    const std::filesystem::path disk = tmp() / (name + ".raw");
    std::ofstream(disk) << std::string(MiB, '\0');
    SmallDomain d;
    d.name = name;
    d.cell_mib = 128;
    d.type = "qemu";
    d.os_extra = "\n" + source_.OsXml() + "  ";
    d.devices_extra = "    <disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='" +
                      disk.string() + "'/><target dev='vda' bus='virtio'/></disk>\n"
                      "    <interface type='user'><mac address='52:54:00:6d:69:67'/><model type='virtio'/></interface>\n" +
                      source_.SerialXml();
    if (shape) shape(&d);
    const std::string xml = WriteDomain(d);
    if (defined) {
      RunResult define = Qlaunch({"define", xml});
      ASSERT_EQ(define.exit_code, 0) << define.Describe();
    }
    RunResult started = Qlaunch({"start", "--json", defined ? name : xml});
    ASSERT_EQ(started.exit_code, 0) << started.Describe();
    source_pid_ = json::parse(started.out).value("pid", 0);
    ASSERT_GT(source_pid_, 0) << started.out;
    sum_ = source_.Report("sum", [](const std::string&) { return true; }, seconds(240));
    ASSERT_EQ(sum_.size(), 32u) << "the guest never reported its buffer's MD5:\n" << Slurp(source_.serial);
    ASSERT_GE(CountPasses(source_, 3, seconds(60)), 4u) << "the guest does not count:\n" << Slurp(source_.serial);
  }

  // The source's live XML with only the serial log's path changed (both QEMUs append to a file
  // of their own), written out for the destination.
  std::string DestinationXml(const std::string& name) {
    RunResult live = Qlaunch({"dumpxml", name});
    EXPECT_EQ(live.exit_code, 0) << live.Describe();
    std::string xml = live.out;
    const std::string from = source_.serial.string(), to = dest_.serial.string();
    size_t replaced = 0;
    for (size_t at = xml.find(from); at != std::string::npos; at = xml.find(from, at + to.size()), ++replaced)
      xml.replace(at, from.size(), to);
    EXPECT_GE(replaced, 1u) << "the serial log's path is not in the live XML:\n" << live.out;
    const std::filesystem::path path = tmp() / (name + "-dest.xml");
    std::ofstream(path) << xml;
    return path.string();
  }

  // `start --incoming URI --json` under root B; its report, checked against the contract.
  json StartIncoming(const std::string& name, const std::string& uri) {
    RunResult r = Qlaunch({"start", "--incoming", uri, "--json", DestinationXml(name)}, B());
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (r.exit_code != 0) return json();
    const json report = json::parse(r.out);
    EXPECT_EQ(report.value("name", ""), name) << r.out;
    EXPECT_GT(report.value("pid", 0), 0) << r.out;
    EXPECT_TRUE(report.contains("timings_ms") && report["timings_ms"].is_object()) << r.out;
    return report;
  }

  // The entry of `name` in `list --json` under the root of `env` ({} when there is none).
  json Listed(const std::string& name, const Env& env = {}) {
    RunResult r = Qlaunch({"list", "--json"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (r.exit_code != 0) return json::object();
    for (const json& e : json::parse(r.out))
      if (e.value("name", "") == name) return e;
    return json::object();
  }
  // The state `list` gives once it no longer says "incoming" (a destination QEMU takes a moment
  // after the source has reported the migration completed); "incoming" after `limit`.
  std::string StateAfterIncoming(const std::string& name, const Env& env, seconds limit) {
    std::string state;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      const json e = Listed(name, env);
      state = e.empty() ? "(not listed)" : e.value("state", "");
      if (state != "incoming") return state;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return state;
  }

  // The guest's last complete count on `guest`'s console (0 before the first).
  static uint64_t LastCount(const HotplugGuest& guest) {
    const std::vector<std::string> counts = guest.Reports("count");
    return counts.empty() ? 0 : std::stoull(counts.back());
  }
  // The guest's count once it passes `n`, waiting up to `limit` (its last count, or 0, if not).
  static uint64_t CountPasses(const HotplugGuest& guest, uint64_t n, seconds limit) {
    const std::string v = guest.Report("count", [&](const std::string& c) { return std::stoull(c) > n; }, limit);
    return v.empty() ? 0 : std::stoull(v);
  }

  // The guest goes on counting on `guest`'s console, and every resum there is the sum.
  void ExpectCounting(const HotplugGuest& guest) {
    const uint64_t now = LastCount(guest);
    EXPECT_GT(CountPasses(guest, now + 3, seconds(60)), now + 3) << "the guest stopped counting:\n" << Slurp(guest.serial);
    ExpectEveryResum(guest);
  }
  void ExpectEveryResum(const HotplugGuest& guest) {
    for (const std::string& resum : guest.Reports("resum")) EXPECT_EQ(resum, sum_) << guest.serial;
  }

  // On the destination's console the guest counts on from the source's last count (a line cut
  // by the move may be lost) without booting again, and sums its buffer to the same MD5.
  void ExpectGuestGoesOn(uint64_t last_on_source) { ExpectGoesOnAt(dest_, last_on_source); }
  // The same on `g`'s console (a restore's: QEMU opened the log anew, so all in it is the
  // restored guest's).
  void ExpectGoesOnAt(const HotplugGuest& g, uint64_t last) {
    EXPECT_GT(CountPasses(g, last, seconds(60)), last) << Slurp(g.serial);
    const std::vector<std::string> counts = g.Reports("count");
    ASSERT_FALSE(counts.empty()) << Slurp(g.serial);
    EXPECT_GT(std::stoull(counts.front()), last);
    EXPECT_LE(std::stoull(counts.front()), last + 2);
    EXPECT_EQ(g.Reports("sum"), std::vector<std::string>{}) << "the guest booted again:\n" << Slurp(g.serial);
    EXPECT_EQ(g.Report("resum", [](const std::string&) { return true; }, seconds(120)), sum_) << Slurp(g.serial);
    ExpectEveryResum(source_);
    ExpectEveryResum(dest_);
  }

  // `name` is gone from root A after it moved away: its QEMU exited (and is reaped), nothing
  // runs on its state directory, which is gone, and A's list no longer has it.
  void ExpectGoneFromSource(const std::string& name) {
    ExpectQemuGone(source_pid_);
    EXPECT_EQ(LivePidsWithCmdline(DomainStateDir(name).string()), std::vector<pid_t>{});
    EXPECT_FALSE(std::filesystem::exists(DomainStateDir(name))) << DomainStateDir(name) << " left behind";
    EXPECT_EQ(Qlaunch({"list", "--json"}).out, "[]\n");
  }
};

}  // namespace qlaunch::testing
