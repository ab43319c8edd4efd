// setmem: the balloon's target of a running domain, as `virsh setmem --live` sets it, and
// dominfo's "Used memory" (query-balloon's actual). The refusals on a guest that never boots
// (libvirt's wording; nothing sent to QEMU), then a booted guest (Debian's kernel, a busybox
// initramfs with virtio_balloon, tests/boot/hotplug-init reporting its MemTotal every second)
// whose memory shrinks and grows back. Under TCG.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "support/hotplug_guest.h"
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class SetmemTest : public LaunchTest {
 protected:
  // A 256 MiB TCG domain with `balloon` as its <memballoon> model and `os` inside <os>.
  std::string WriteXml(const std::string& name, const std::string& balloon, const std::string& os = "") {
    const fs::path xml = tmp() / (name + ".xml");
    std::ofstream(xml) << "<domain type='qemu'>\n  <name>" << name << "</name>\n  <memory unit='MiB'>256</memory>\n"
                       << "  <vcpu>1</vcpu>\n  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n" << os
                       << "  </os>\n  <devices>\n" << extra_devices_ << "    <memballoon model='" << balloon
                       << "'/>\n  </devices>\n</domain>\n";
    return xml.string();
  }
  // QEMU's own balloon "actual" (bytes), read past dominfo; 0 when QEMU answers none.
  uint64_t QemuBalloon(const std::string& name) {
    RunResult r = Qlaunch({"qemu-monitor-command", name, R"({"execute":"query-balloon"})"});
    const json j = json::parse(r.out, nullptr, false);
    return r.exit_code == 0 && j.is_object() && j.contains("return") ? j["return"].value("actual", uint64_t{0}) : 0;
  }
  // dominfo's "Used memory"; with a balloon it must be QEMU's (not the <memory> dominfo falls
  // back to when query-balloon fails). A balloon on the move is read before and after: dominfo's
  // number lies between the two.
  uint64_t UsedMemory(const std::string& name, bool balloon = true) {
    const uint64_t before = balloon ? QemuBalloon(name) : 0;
    RunResult r = Qlaunch({"dominfo", "--json", name});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    const uint64_t used = r.exit_code == 0 ? json::parse(r.out).at("used_memory_bytes").get<uint64_t>() : 0;
    if (balloon) {
      const uint64_t after = QemuBalloon(name);
      EXPECT_TRUE(used >= std::min(before, after) && used <= std::max(before, after))
          << "dominfo's used memory " << used << " is not QEMU's balloon (" << before << ", then " << after << ")";
    }
    return used;
  }
  std::string extra_devices_;
};

TEST_F(SetmemTest, RefusedAsLibvirtRefusesAndNothingSent) {
  RunResult started = Qlaunch({"start", WriteXml("sm-balloon", "virtio")});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  EXPECT_EQ(UsedMemory("sm-balloon"), 256u << 20) << "no driver in the guest: the balloon holds nothing";

  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{"setmem", "sm-balloon", "262145"}, "cannot set memory higher than max memory (262145 KiB asked, <memory> is 262144 KiB)"},
           {{"setmem", "sm-balloon", "1T"}, "cannot set memory higher than max memory"},
           {{"setmem", "sm-balloon", "12Q"}, "invalid memory size '12Q'"},
           {{"setmem", "sm-balloon", "M"}, "invalid memory size 'M'"},
           {{"setmem", "sm-balloon", "0"}, "at least 1 KiB"},
           {{"setmem", "--config", "sm-balloon", "128M"}, "keeps no stored definition"},
       }) {
    RunResult r = Qlaunch(c.args);
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(c.error), std::string::npos) << r.Describe();
  }
  // Within <memory>: QEMU takes the target (a guest without a driver does not move).
  for (const std::string& size : std::vector<std::string>{"128M", "131072", "256MiB", "128m"}) {
    RunResult r = Qlaunch({"setmem", "--json", "sm-balloon", size});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    const json out = json::parse(r.out);
    const uint64_t want = size == "256MiB" ? 256u << 20 : 128u << 20;
    EXPECT_EQ(out.at("target_bytes").get<uint64_t>(), want) << size;
    EXPECT_EQ(out.at("qmp"), json({{"execute", "balloon"}, {"arguments", {{"value", want}}}})) << size;
  }
  EXPECT_EQ(Qlaunch({"destroy", "sm-balloon"}).exit_code, 0);

  // Without a balloon: libvirt's message, and the domain runs on.
  ASSERT_EQ(Qlaunch({"start", WriteXml("sm-none", "none")}).exit_code, 0);
  RunResult none = Qlaunch({"setmem", "sm-none", "128M"});
  EXPECT_EQ(none.exit_code, 1) << none.Describe();
  EXPECT_NE(none.err.find("Unable to change memory of active domain without the balloon device and guest OS balloon "
                          "driver (its XML has <memballoon model='none'>)"),
            std::string::npos)
      << none.Describe();
  EXPECT_EQ(UsedMemory("sm-none", false), 256u << 20) << "without a balloon, all of <memory>";
  EXPECT_EQ(Qlaunch({"destroy", "sm-none"}).exit_code, 0);
}

TEST_F(SetmemTest, ABootedGuestGivesMemoryBackAndTakesItAgain) {
  const HotplugGuest guest = MakeHotplugGuest(tmp());
  if (!guest.missing.empty()) GTEST_SKIP() << guest.missing;
  extra_devices_ = guest.SerialXml();
  RunResult started = Qlaunch({"start", WriteXml("sm-boot", "virtio", guest.OsXml())});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();

  // The guest's last reported MemTotal (KiB), waiting until `ok` holds for it (the guest reports
  // once a second, and a balloon moves in steps); 0 when it never reported.
  auto mem_total = [&](const std::function<bool(uint64_t)>& ok, std::chrono::seconds limit) -> uint64_t {
    const std::string v = guest.Report("mem", [&](const std::string& kib) { return ok(std::stoull(kib)); }, limit);
    return v.empty() ? 0 : std::stoull(v);
  };
  auto used_reaches = [&](uint64_t want, std::chrono::seconds limit) {
    uint64_t used = 0;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      if ((used = UsedMemory("sm-boot")) == want) return used;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return used;
  };
  const uint64_t full = mem_total([](uint64_t) { return true; }, std::chrono::seconds(120));
  ASSERT_GT(full, 0u) << "the guest never reported its memory";
  EXPECT_EQ(UsedMemory("sm-boot"), 256u << 20);

  // Refusals with a driver in the guest: one that sent anything would move the balloon, and the
  // guest would see it (it reports once a second).
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"setmem", "--config", "sm-boot", "128M"}, {"setmem", "sm-boot", "300M"}, {"setmem", "sm-boot", "0"}}) {
    RunResult r = Qlaunch(args);
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
  }
  ASSERT_TRUE(guest.AwaitNewReports("mem", 2, std::chrono::seconds(30))) << "the guest stopped reporting";
  EXPECT_EQ(QemuBalloon("sm-boot"), 256u << 20) << "a refused setmem moved the balloon";
  EXPECT_EQ(mem_total([](uint64_t) { return true; }, std::chrono::seconds(5)), full) << "a refused setmem reached the guest";

  // 96 MiB to the balloon: the driver takes it from the guest, which sees that much less.
  ASSERT_EQ(Qlaunch({"setmem", "sm-boot", "160M"}).exit_code, 0);
  EXPECT_EQ(used_reaches(160u << 20, std::chrono::seconds(60)), 160u << 20);
  const uint64_t shrunk = mem_total([&](uint64_t kib) { return kib + 96 * 1024 == full; }, std::chrono::seconds(30));
  EXPECT_EQ(full - shrunk, 96u * 1024) << "MemTotal " << full << " KiB before, " << shrunk << " KiB after";
  RunResult text = Qlaunch({"dominfo", "sm-boot"});
  EXPECT_TRUE(std::regex_search(text.out, std::regex("\nUsed memory: +160 MiB\n"))) << text.Describe();
  EXPECT_TRUE(std::regex_search(text.out, std::regex("\nMax memory: +256 MiB\n"))) << text.Describe();
  RunResult live = Qlaunch({"dumpxml", "sm-boot"});
  EXPECT_NE(live.out.find("<currentMemory unit=\"KiB\">163840</currentMemory>"), std::string::npos) << live.Describe();

  // And back.
  ASSERT_EQ(Qlaunch({"setmem", "sm-boot", "256M"}).exit_code, 0);
  EXPECT_EQ(used_reaches(256u << 20, std::chrono::seconds(60)), 256u << 20);
  EXPECT_EQ(mem_total([&](uint64_t kib) { return kib == full; }, std::chrono::seconds(30)), full);
  EXPECT_EQ(Qlaunch({"destroy", "sm-boot"}).exit_code, 0);
}

}  // namespace
}  // namespace qlaunch::testing
