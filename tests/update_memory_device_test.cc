// update-memory-device: a running domain's virtio-mem device asked to plug or unplug memory, as
// `virsh update-memory-device --live --requested-size` does. The refusals (libvirt's words;
// nothing sent, QEMU's requested size unchanged), growth on huge pages checked against the pool,
// and a booted guest (Debian's kernel, virtio_mem in its initramfs, memhp_default_state=online)
// whose MemTotal and plugged size follow, with the pages taken and given back. Under TCG.
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "support/hotplug_guest.h"
#include "support/hugepages.h"
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t MiB = 1ull << 20;

class UpdateMemoryDeviceTest : public LaunchTest {
 protected:
  // A q35 TCG domain: one 256 MiB cell and one virtio-mem device of `size_mib` (2 MiB blocks) on
  // huge pages or not, `requested_mib` plugged at start.
  std::string WriteXml(const std::string& name, unsigned size_mib, unsigned requested_mib, bool hugepages,
                       const HotplugGuest* guest = nullptr) {
    const fs::path xml = tmp() / (name + ".xml");
    std::ofstream(xml) << "<domain type='qemu'>\n  <name>" << name << "</name>\n"
                       << "  <maxMemory slots='2' unit='MiB'>4096</maxMemory>\n  <memory unit='MiB'>" << 256 + size_mib
                       << "</memory>\n  <vcpu>1</vcpu>\n  <features><acpi/></features>\n"
                       << "  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n"
                       << (guest ? guest->OsXml("memhp_default_state=online") : "") << "  </os>\n"
                       << "  <cpu><numa><cell id='0' cpus='0' memory='256' unit='MiB'/></numa></cpu>\n"
                       << "  <devices>\n" << (guest ? guest->SerialXml() : "") << "    <memory model='virtio-mem'>\n"
                       << (hugepages ? "      <source><pagesize unit='KiB'>2048</pagesize></source>\n" : "")
                       << "      <target><size unit='MiB'>" << size_mib << "</size><node>0</node>"
                       << "<block unit='KiB'>2048</block><requested unit='MiB'>" << requested_mib
                       << "</requested></target>\n    </memory>\n  </devices>\n</domain>\n";
    return xml.string();
  }
  // dominfo's view of the domain's only virtio-mem device.
  json VirtioMem(const std::string& name) {
    RunResult r = Qlaunch({"dominfo", "--json", name});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (r.exit_code != 0) return json::object();
    const json all = json::parse(r.out).at("virtio_mem");
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? json::object() : all[0];
  }
  // Waits up to `limit` for the guest to have plugged `bytes`; what it has plugged then.
  uint64_t PluggedReaches(const std::string& name, uint64_t bytes, std::chrono::seconds limit) {
    uint64_t plugged = 0;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      if ((plugged = VirtioMem(name).value("plugged_bytes", uint64_t{0})) == bytes) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return plugged;
  }
};

TEST_F(UpdateMemoryDeviceTest, RefusedAsLibvirtRefusesAndNothingSent) {
  RunResult started = Qlaunch({"start", WriteXml("um-ram", 512, 0, false)});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  EXPECT_EQ(VirtioMem("um-ram"), json({{"alias", "virtiomem0"}, {"node", 0}, {"size_bytes", 512 * MiB},
                                       {"requested_bytes", 0}, {"plugged_bytes", 0}}));
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{"--requested-size", "513M"}, "requested size must be smaller than or equal to @size (524288KiB)"},
           {{"--requested-size", "3M"}, "requested size must be an integer multiple of block size (2048KiB)"},
           {{"--requested-size", "12Q"}, "update-memory-device: invalid memory size '12Q'"},
           {{"--alias", "virtiomem7", "--requested-size", "64M"},
            "no memory device found with alias 'virtiomem7' (the domain's virtio-mem devices: virtiomem0 (node 0))"},
           {{"--node", "1", "--requested-size", "64M"}, "no memory device found on guest node 1"},
           {{"--config", "--requested-size", "64M"}, "keeps no stored definition"},
           {{}, "nothing to change: give --requested-size"},
       }) {
    std::vector<std::string> args = {"update-memory-device", "um-ram"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    RunResult r = Qlaunch(args);
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find(c.error), std::string::npos) << r.Describe();
  }
  EXPECT_EQ(VirtioMem("um-ram").value("requested_bytes", uint64_t{1}), 0u) << "QEMU was asked nothing";

  // Accepted: QEMU takes the new size (no guest driver plugs it), the running definition and
  // the live XML follow.
  RunResult r = Qlaunch({"update-memory-device", "um-ram", "--alias", "virtiomem0", "--requested-size", "128M", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const json out = json::parse(r.out);
  EXPECT_EQ(out.at("qmp"), json({{"execute", "qom-set"},
                                 {"arguments", {{"path", "/machine/peripheral/virtiomem0"},
                                                {"property", "requested-size"},
                                                {"value", 128 * MiB}}}}));
  EXPECT_EQ(out.at("requested_bytes_before"), 0);
  EXPECT_EQ(out.at("requested_bytes"), 128 * MiB);
  EXPECT_EQ(VirtioMem("um-ram").value("requested_bytes", uint64_t{0}), 128 * MiB);
  RunResult xml = Qlaunch({"dumpxml", "um-ram"});
  ASSERT_EQ(xml.exit_code, 0) << xml.Describe();
  EXPECT_NE(xml.out.find("<requested unit=\"KiB\">131072</requested>"), std::string::npos) << xml.out;
  EXPECT_NE(xml.out.find("<alias name=\"virtiomem0\"/>"), std::string::npos) << xml.out;
  EXPECT_EQ(Qlaunch({"destroy", "um-ram"}).exit_code, 0);

  // A domain without virtio-mem.
  const fs::path plain = tmp() / "um-plain.xml";
  std::ofstream(plain) << "<domain type='qemu'><name>um-plain</name><memory unit='MiB'>128</memory><vcpu>1</vcpu>"
                          "<os><type arch='x86_64' machine='q35'>hvm</type></os></domain>\n";
  ASSERT_EQ(Qlaunch({"start", plain.string()}).exit_code, 0);
  RunResult none = Qlaunch({"update-memory-device", "um-plain", "--requested-size", "64M"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no memory device found: the domain has no <memory model='virtio-mem'>"), std::string::npos)
      << none.Describe();
  EXPECT_EQ(Qlaunch({"destroy", "um-plain"}).exit_code, 0);
}

TEST_F(UpdateMemoryDeviceTest, GrowthOnHugepagesIsCheckedAgainstThePool) {
  if (DefaultHugepageBytes() != 2 * MiB) GTEST_SKIP() << "this test assumes 2 MiB default hugepages";
  HugepagePool pool = HugepagePool::Exactly(64);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  RunResult started = Qlaunch({"start", WriteXml("um-huge", 512, 0, true)});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  RunResult short_pool = Qlaunch({"update-memory-device", "um-huge", "--requested-size", "256M"});
  EXPECT_EQ(short_pool.exit_code, 1);
  EXPECT_NE(short_pool.err.find("not enough 2 MiB hugepages on the host (all nodes): the domain needs 128, 64 are free"),
            std::string::npos)
      << short_pool.Describe();
  EXPECT_NE(short_pool.err.find("nothing was changed"), std::string::npos) << short_pool.Describe();
  EXPECT_EQ(VirtioMem("um-huge").value("requested_bytes", uint64_t{1}), 0u);
  EXPECT_EQ(HugepagesFree(), 64u);
  RunResult fits = Qlaunch({"update-memory-device", "um-huge", "--requested-size", "128M"});
  EXPECT_EQ(fits.exit_code, 0) << fits.Describe();
  EXPECT_EQ(VirtioMem("um-huge").value("requested_bytes", uint64_t{0}), 128 * MiB);
  EXPECT_EQ(Qlaunch({"destroy", "um-huge"}).exit_code, 0);
  EXPECT_EQ(HugepagesFree(), 64u);
}

TEST_F(UpdateMemoryDeviceTest, ABootedGuestPlugsAndUnplugsOnHugepages) {
  if (DefaultHugepageBytes() != 2 * MiB) GTEST_SKIP() << "this test assumes 2 MiB default hugepages";
  const HotplugGuest guest = MakeHotplugGuest(tmp());
  if (!guest.missing.empty()) GTEST_SKIP() << guest.missing;
  HugepagePool pool = HugepagePool::Exactly(128);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  RunResult started = Qlaunch({"start", "--json", WriteXml("um-boot", 512, 64, true, &guest)});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  const pid_t pid = json::parse(started.out).value("pid", 0);

  // The guest's driver plugs what was requested at start; the device preallocates it on huge pages.
  EXPECT_EQ(PluggedReaches("um-boot", 64 * MiB, std::chrono::seconds(120)), 64 * MiB);
  ASSERT_TRUE(guest.AwaitNewReports("mem", 1, std::chrono::seconds(30))) << "no report after the plug";
  const std::string first = guest.Report("mem", [](const std::string&) { return true; }, std::chrono::seconds(60));
  ASSERT_FALSE(first.empty()) << "the guest never reported its memory";
  const uint64_t base = std::stoull(first);
  EXPECT_EQ(HugepagesFree(), 128u - 32u);

  auto mem_total_is = [&](uint64_t kib) {
    const std::string v = guest.Report("mem", [&](const std::string& s) { return std::stoull(s) == kib; },
                                       std::chrono::seconds(60));
    return v.empty() ? 0 : std::stoull(v);
  };
  // Up by 128 MiB: the guest sees it, and the pages are taken.
  RunResult up = Qlaunch({"update-memory-device", "um-boot", "--requested-size", "192M"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(PluggedReaches("um-boot", 192 * MiB, std::chrono::seconds(60)), 192 * MiB);
  EXPECT_EQ(mem_total_is(base + 128 * 1024), base + 128 * 1024);
  EXPECT_EQ(HugepagesFree(), 128u - 96u);
  RunResult text = Qlaunch({"dominfo", "um-boot"});
  EXPECT_NE(text.out.find("virtio-mem:       virtiomem0 (node 0): 192 MiB plugged of 512 MiB, 192 MiB requested"),
            std::string::npos)
      << text.out;

  // Down to 32 MiB: the guest gives the blocks back, and the pages return to the pool.
  RunResult down = Qlaunch({"update-memory-device", "um-boot", "--requested-size", "32M"});
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_EQ(PluggedReaches("um-boot", 32 * MiB, std::chrono::seconds(60)), 32 * MiB);
  EXPECT_EQ(mem_total_is(base - 32 * 1024), base - 32 * 1024);
  EXPECT_EQ(HugepagesFree(), 128u - 16u);

  EXPECT_EQ(Qlaunch({"destroy", "um-boot"}).exit_code, 0);
  ExpectHostClean("um-boot", pid, 128);
}

}  // namespace
}  // namespace qlaunch::testing
