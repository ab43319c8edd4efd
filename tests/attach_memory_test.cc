// attach-device / detach-device of a <memory model='dimm'> on a running, booted TCG guest
// (Debian's kernel with ACPI memory hot-plug, memhp_default_state=online_movable so that the
// guest can give it back): a shared hugetlb DIMM is filled by qlaunch before QEMU sees it, a
// private one by QEMU in object-add; the guest's MemTotal follows, the pages are taken and given
// back; the hostile inputs are refused with the guest untouched. And a virtio-mem device attached
// at run time (on a spare root port), grown and shrunk by update-memory-device, its detach
// refused by QEMU 7.2 with the guest untouched. And a DIMM from the warm pool (issue 38): dirty
// when detached, scrubbed warm again once QEMU has let go of it.
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/hotplug_guest.h"
#include "support/hugepages.h"
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t MiB = 1ull << 20;

class AttachMemoryTest : public LaunchTest {
 protected:
  // Every test boots the hotplug guest on a pool of 256 free 2 MiB pages.
  void SetUp() override {
    LaunchTest::SetUp();
    if (IsSkipped()) return;
    if (DefaultHugepageBytes() != 2 * MiB) GTEST_SKIP() << "this test assumes 2 MiB default hugepages";
    guest_ = MakeHotplugGuest(tmp());
    if (!guest_.missing.empty()) GTEST_SKIP() << guest_.missing;
    pool_.emplace(HugepagePool::Exactly(256));
    if (!pool_->ok()) GTEST_SKIP() << pool_->error();
  }
  void TearDown() override {
    LaunchTest::TearDown();
    pool_.reset();
  }
  HotplugGuest guest_;
  std::optional<HugepagePool> pool_;

  // q35 TCG, one 256 MiB cell on shared 2 MiB hugetlb memfds, room for two DIMMs up to 1 GiB
  // (and two spare root ports for a virtio-mem device).
  std::string WriteXml(const std::string& name, const HotplugGuest& guest) {
    const fs::path xml = tmp() / (name + ".xml");
    std::ofstream(xml) << "<domain type='qemu'>\n  <name>" << name << "</name>\n"
                       << "  <maxMemory slots='2' unit='MiB'>1024</maxMemory>\n  <memory unit='MiB'>256</memory>\n"
                       << "  <memoryBacking><hugepages/><source type='memfd'/><access mode='shared'/></memoryBacking>\n"
                       << "  <vcpu>1</vcpu>\n  <features><acpi/></features>\n"
                       << "  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n"
                       << guest.OsXml("memhp_default_state=online_movable") << "  </os>\n"
                       << "  <cpu><numa><cell id='0' cpus='0' memory='256' unit='MiB'/></numa></cpu>\n"
                       << "  <devices>\n    <controller type='pci' index='0' model='pcie-root'/>\n"
                       << "    <controller type='pci' index='1' model='pcie-root-port'/>\n"
                       << "    <controller type='pci' index='2' model='pcie-root-port'/>\n"
                       << guest.SerialXml() << "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    return xml.string();
  }
  std::string DeviceFile(const std::string& file, const std::string& xml) {
    const fs::path p = tmp() / file;
    std::ofstream(p) << xml;
    return p.string();
  }
  // Starts `name` on the hotplug guest; its QEMU's pid and the guest's first MemTotal (KiB).
  void Boot(const std::string& name, const HotplugGuest& guest, pid_t* pid, uint64_t* mem_total_kib, const Env& env = {}) {
    RunResult started = Qlaunch({"start", "--json", WriteXml(name, guest)}, env);
    ASSERT_EQ(started.exit_code, 0) << started.Describe();
    *pid = json::parse(started.out).value("pid", 0);
    const std::string first = guest.Report("mem", [](const std::string&) { return true; }, std::chrono::seconds(120));
    ASSERT_FALSE(first.empty()) << "the guest never reported its memory";
    *mem_total_kib = std::stoull(first);
  }
  // The guest's MemTotal once it reports `kib` (its last report after a minute without).
  static uint64_t MemTotalOnceItIs(const HotplugGuest& guest, uint64_t kib) {
    const std::string v = guest.Report("mem", [&](const std::string& s) { return std::stoull(s) == kib; },
                                       std::chrono::seconds(60));
    return v.empty() ? 0 : std::stoull(v);
  }
  size_t MemoryDevices(const std::string& name) {
    RunResult r = Qlaunch({"qemu-monitor-command", name, R"({"execute":"query-memory-devices"})"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return r.exit_code == 0 ? json::parse(r.out).at("return").size() : 0;
  }
};

TEST_F(AttachMemoryTest, ABootedGuestGainsAndLosesDimmsFilledOutsideQemu) {
  const HotplugGuest& guest = guest_;
  pid_t pid = 0;
  uint64_t base = 0;
  ASSERT_NO_FATAL_FAILURE(Boot("am-boot", guest, &pid, &base));
  auto mem_total_is = [&](uint64_t kib) { return MemTotalOnceItIs(guest, kib); };
  EXPECT_EQ(HugepagesFree(), 128u);

  // Hostile input first: each refused with the file and line, nothing plugged, no page taken.
  const std::string dimm = "<memory model='dimm'>\n  <target><size unit='MiB'>128</size><node>0</node></target>\n</memory>\n";
  struct Bad {
    std::string xml, error;
  };
  for (const Bad& b : std::vector<Bad>{
           {"<memory model='dimm'>\n  <target><size unit='MiB'>128</size><node>0</node></target>\n"
            "  <address type='dimm' slot='2'/>\n</memory>\n",
            "bad.xml:1: error: <memory>: memory device slot '2' exceeds slots count '2'"},
           {"<memory model='dimm'>\n  <target><size unit='MiB'>128</size><node>1</node></target>\n</memory>\n",
            "bad.xml:1: error: <memory>: can't add memory backend for guest node '1' as the guest has only '1' NUMA nodes"},
           {"<memory model='dimm'>\n  <target><size unit='MiB'>1024</size><node>0</node></target>\n</memory>\n",
            "would exceed domain's maxMemory config size '1048576'"},
           {"<memory model='dimm'>\n  <source><pagesize unit='KiB'>4096</pagesize></source>\n"
            "  <target><size unit='MiB'>128</size><node>0</node></target>\n</memory>\n",
            "bad.xml:1: error: <memory>: the host has no huge pages of 4096 KiB"},
           {"<memory model='dimm'>\n  <target><size unit='MiB'>512</size><node>0</node></target>\n</memory>\n",
            "attach-device am-boot: dimm0: not enough 2 MiB hugepages"},
       }) {
    RunResult r = Qlaunch({"attach-device", "am-boot", DeviceFile("bad.xml", b.xml)});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(b.error), std::string::npos) << r.Describe();
    EXPECT_EQ(MemoryDevices("am-boot"), 0u);
    EXPECT_EQ(HugepagesFree(), 128u) << b.error;
  }

  // A shared hugetlb DIMM: qlaunch fills it, QEMU gets it by fd; the guest sees 128 MiB more.
  RunResult shared = Qlaunch({"attach-device", "--json", "am-boot", DeviceFile("dimm.xml", dimm)});
  ASSERT_EQ(shared.exit_code, 0) << shared.Describe();
  const json a = json::parse(shared.out);
  EXPECT_EQ(a.value("alias", ""), "dimm0");
  EXPECT_EQ(a.value("prealloc", ""), "launcher");
  EXPECT_GT(a.value("fill_ms", 0.0), 0.0);
  EXPECT_EQ(HugepagesFree(), 64u);
  EXPECT_EQ(mem_total_is(base + 128 * 1024), base + 128 * 1024);
  RunResult info = Qlaunch({"dominfo", "--json", "am-boot"});
  EXPECT_EQ(json::parse(info.out).value("memory_bytes", uint64_t{0}), 384 * MiB) << info.out;
  RunResult listed = Qlaunch({"list", "--json"});
  EXPECT_EQ(json::parse(listed.out).at(0).value("memory_bytes", uint64_t{0}), 384 * MiB) << listed.out;
  RunResult xml = Qlaunch({"dumpxml", "am-boot"});
  EXPECT_NE(xml.out.find("<alias name=\"dimm0\"/>"), std::string::npos) << xml.out;
  EXPECT_NE(xml.out.find("<address type=\"dimm\" slot=\"0\""), std::string::npos) << xml.out;
  EXPECT_NE(xml.out.find("<memory unit=\"KiB\">393216</memory>"), std::string::npos) << xml.out;

  // A private one (access='private'): QEMU preallocates it in object-add. (128 MiB: the guest's
  // memory block size on x86; a smaller DIMM is plugged but never onlined.)
  const std::string priv = "<memory model='dimm' access='private'>\n  <target><size unit='MiB'>128</size><node>0</node>"
                           "</target>\n</memory>\n";
  RunResult second = Qlaunch({"attach-device", "--json", "am-boot", DeviceFile("private.xml", priv)});
  ASSERT_EQ(second.exit_code, 0) << second.Describe();
  EXPECT_EQ(json::parse(second.out).value("alias", ""), "dimm1");
  EXPECT_EQ(json::parse(second.out).value("prealloc", ""), "qemu");
  EXPECT_EQ(HugepagesFree(), 0u);
  EXPECT_EQ(mem_total_is(base + 256 * 1024), base + 256 * 1024);
  EXPECT_EQ(MemoryDevices("am-boot"), 2u);

  // Detach both: the guest lets them go (movable), and every page comes back.
  for (const auto& [file, kib] : {std::pair{std::string("dimm.xml"), base + 128 * 1024}, {std::string("private.xml"), base}}) {
    RunResult d = Qlaunch({"detach-device", "--json", "am-boot", (tmp() / file).string()});
    ASSERT_EQ(d.exit_code, 0) << d.Describe();
    EXPECT_EQ(d.out.find("\"released\":false"), std::string::npos) << d.out;
    EXPECT_EQ(mem_total_is(kib), kib) << file;
  }
  EXPECT_EQ(MemoryDevices("am-boot"), 0u);
  EXPECT_EQ(HugepagesFree(), 128u);
  RunResult after = Qlaunch({"dumpxml", "am-boot"});
  EXPECT_EQ(after.out.find("model=\"dimm\""), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("<memory unit=\"KiB\">262144</memory>"), std::string::npos) << after.out;

  EXPECT_EQ(Qlaunch({"destroy", "am-boot"}).exit_code, 0);
  ExpectHostClean("am-boot", pid, 256);
}

TEST_F(AttachMemoryTest, AVirtioMemDeviceAttachedAtRunTimeGrowsAndShrinksTheGuest) {
  const HotplugGuest& guest = guest_;
  pid_t pid = 0;
  uint64_t base = 0;
  ASSERT_NO_FATAL_FAILURE(Boot("am-vmem", guest, &pid, &base));
  auto mem_total_is = [&](uint64_t kib) { return MemTotalOnceItIs(guest, kib); };
  EXPECT_EQ(HugepagesFree(), 128u);

  // More requested than the pool holds: refused before QEMU hears of it.
  const std::string greedy = "<memory model='virtio-mem'>\n  <target><size unit='MiB'>384</size><node>0</node>"
                             "<block unit='KiB'>2048</block><requested unit='MiB'>384</requested></target>\n</memory>\n";
  RunResult refused = Qlaunch({"attach-device", "am-vmem", DeviceFile("greedy.xml", greedy)});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(refused.err.find("not enough 2 MiB hugepages"), std::string::npos) << refused.Describe();
  EXPECT_EQ(MemoryDevices("am-vmem"), 0u);
  EXPECT_EQ(HugepagesFree(), 128u);

  // Attached empty: nothing plugged, no page taken; on the spare root port it was given.
  const std::string vmem = "<memory model='virtio-mem'>\n  <target><size unit='MiB'>256</size><node>0</node>"
                           "<block unit='KiB'>2048</block></target>\n</memory>\n";
  RunResult attached = Qlaunch({"attach-device", "--json", "am-vmem", DeviceFile("vmem.xml", vmem)});
  ASSERT_EQ(attached.exit_code, 0) << attached.Describe();
  const json a = json::parse(attached.out);
  EXPECT_EQ(a.value("alias", ""), "virtiomem0");
  EXPECT_EQ(a.value("prealloc", ""), "none");
  EXPECT_EQ(HugepagesFree(), 128u);
  RunResult devices = Qlaunch({"qemu-monitor-command", "am-vmem", R"({"execute":"query-memory-devices"})"});
  ASSERT_EQ(devices.exit_code, 0) << devices.Describe();
  const json d = json::parse(devices.out).at("return").at(0);
  EXPECT_EQ(d.value("type", ""), "virtio-mem");
  EXPECT_EQ(d.at("data").value("max-size", uint64_t{0}), 256 * MiB);
  EXPECT_EQ(d.at("data").value("size", uint64_t{1}), 0u);

  // The guest plugs what is asked for, on huge pages the pool gives; and lets it go again.
  RunResult grow = Qlaunch({"update-memory-device", "am-vmem", "--alias", "virtiomem0", "--requested-size", "128M"});
  ASSERT_EQ(grow.exit_code, 0) << grow.Describe();
  EXPECT_EQ(mem_total_is(base + 128 * 1024), base + 128 * 1024);
  EXPECT_EQ(HugepagesFree(), 64u);
  RunResult xml = Qlaunch({"dumpxml", "am-vmem"});
  const size_t at = xml.out.find("<memory model=\"virtio-mem\"");
  ASSERT_NE(at, std::string::npos) << xml.out;
  const std::string element = xml.out.substr(at, xml.out.find("</memory>", at) - at);
  EXPECT_NE(element.find("<alias name=\"virtiomem0\"/>"), std::string::npos) << element;
  EXPECT_NE(element.find("<address type=\"pci\" domain=\"0x0000\" bus=\"0x0"), std::string::npos) << element;
  EXPECT_NE(xml.out.find("<memory unit=\"KiB\">524288</memory>"), std::string::npos) << xml.out;

  // QEMU 7.2 cannot unplug virtio-mem: the detach is refused, the device and its memory stay.
  RunResult detach = Qlaunch({"detach-device", "am-vmem", (tmp() / "vmem.xml").string()});
  EXPECT_EQ(detach.exit_code, 1) << detach.Describe();
  EXPECT_NE(detach.err.find("cannot be unplugged"), std::string::npos) << detach.Describe();
  EXPECT_NE(detach.err.find("--requested-size 0"), std::string::npos) << detach.Describe();
  EXPECT_EQ(MemoryDevices("am-vmem"), 1u);
  // Two of the guest's reports later (once a second): a refusal that sent anything (a device_del,
  // a requested-size of 0) would show in the guest, the pool and QEMU's device by then.
  ASSERT_TRUE(guest.AwaitNewReports("mem", 2, std::chrono::seconds(30))) << "the guest stopped reporting";
  EXPECT_EQ(mem_total_is(base + 128 * 1024), base + 128 * 1024);
  EXPECT_EQ(HugepagesFree(), 64u);
  RunResult kept = Qlaunch({"qemu-monitor-command", "am-vmem", R"({"execute":"query-memory-devices"})"});
  ASSERT_EQ(kept.exit_code, 0) << kept.Describe();
  const json k = json::parse(kept.out).at("return").at(0).at("data");
  EXPECT_EQ(k.value("requested-size", uint64_t{0}), 128 * MiB) << k.dump();
  EXPECT_EQ(k.value("size", uint64_t{0}), 128 * MiB) << k.dump();

  RunResult shrink = Qlaunch({"update-memory-device", "am-vmem", "--requested-size", "0"});
  ASSERT_EQ(shrink.exit_code, 0) << shrink.Describe();
  EXPECT_EQ(mem_total_is(base), base);
  EXPECT_EQ(HugepagesFree(), 128u);

  EXPECT_EQ(Qlaunch({"destroy", "am-vmem"}).exit_code, 0);
  ExpectHostClean("am-vmem", pid, 256);
}

// attach-device takes a warm file for the DIMM (nothing filled); detach-device makes it dirty and
// the detached scrub warm again, the same file, once QEMU has unmapped it; the guest is back to
// its memory and every page is accounted for.
TEST_F(AttachMemoryTest, AWarmDimmIsDirtyWhenDetachedThenScrubbedWarm) {
  const std::string pool = "qlaunch-test-am-" + std::to_string(::getpid());
  const Env env{{"QLAUNCH_POOL_DIR", pool}, {"QLAUNCH_POOL_TARGETS", (tmp() / "targets").string()}};
  const fs::path dir = fs::path("/dev/hugepages") / pool;
  struct Drain {  // whatever happens: the domain gone, the pool's pages back, its directory too
    std::function<void()> f;
    ~Drain() { f(); }
  } drain{[&] {
    Qlaunch({"destroy", "am-warm"}, env);
    for (int i = 0; i < 200 && Qlaunch({"pool", "drain", "--json"}, env).out.find("\"left\":0") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::error_code ec;
    fs::remove_all(dir, ec);
  }};
  auto files = [&](const std::string& state) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().starts_with(state + ".")) out.push_back(e.path().filename().string().substr(state.size()));
    return out;
  };
  pid_t pid = 0;
  uint64_t base = 0;
  ASSERT_NO_FATAL_FAILURE(Boot("am-warm", guest_, &pid, &base, env));
  SmallDomain shape;  // one 128 MiB backend on node 0: the DIMM's shape
  shape.name = "am-shape";
  shape.cells = 1;
  shape.cell_mib = 128;
  shape.type = "qemu";
  RunResult filled = Qlaunch({"pool", "fill", "--qemu", kQemu72, WriteDomain(shape)}, env);
  ASSERT_EQ(filled.exit_code, 0) << filled.Describe();
  ASSERT_EQ(files("warm").size(), 1u);
  const std::string warm_file = files("warm")[0];  // ".n0.BYTES.SERIAL"
  EXPECT_EQ(HugepagesFree(), 64u);

  const std::string dimm = "<memory model='dimm'>\n  <target><size unit='MiB'>128</size><node>0</node></target>\n</memory>\n";
  RunResult attached = Qlaunch({"attach-device", "--json", "am-warm", DeviceFile("dimm.xml", dimm)}, env);
  ASSERT_EQ(attached.exit_code, 0) << attached.Describe();
  EXPECT_EQ(json::parse(attached.out).value("prealloc", ""), "warm") << attached.out;
  EXPECT_EQ(HugepagesFree(), 64u) << "nothing allocated: the warm file's pages serve it";
  EXPECT_EQ(files("use"), std::vector<std::string>{warm_file});
  EXPECT_EQ(MemTotalOnceItIs(guest_, base + 128 * 1024), base + 128 * 1024);

  RunResult detached = Qlaunch({"detach-device", "--json", "am-warm", (tmp() / "dimm.xml").string()}, env);
  ASSERT_EQ(detached.exit_code, 0) << detached.Describe();
  EXPECT_EQ(MemTotalOnceItIs(guest_, base), base);
  EXPECT_TRUE(files("use").empty()) << "the detached DIMM's file is still in use";
  // Dirty, then scrubbed by the detached worker once QEMU has unmapped it: warm again, same file.
  for (int i = 0; i < 600 && files("warm").empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(files("warm"), std::vector<std::string>{warm_file});
  EXPECT_TRUE(files("dirty").empty() && files("scrub").empty());
  EXPECT_EQ(HugepagesFree(), 64u);
  EXPECT_EQ(MemoryDevices("am-warm"), 0u);

  EXPECT_EQ(Qlaunch({"destroy", "am-warm"}, env).exit_code, 0);
  RunResult drained = Qlaunch({"pool", "drain", "--json"}, env);
  EXPECT_NE(drained.out.find("\"files\":1"), std::string::npos) << drained.Describe();
  ExpectHostClean("am-warm", pid, 256);
}

}  // namespace
}  // namespace qlaunch::testing
