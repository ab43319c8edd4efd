// The read-only verbs on a real QEMU 7.2 domain (TCG, q35: a virtio disk, an empty SATA cdrom,
// a NIC on user networking, the guest agent's channel, VNC, a pty serial with its console, one
// NUMA cell and a DIMM): `qlaunch dumpxml` gives the live XML, which says what QEMU itself
// reports of the running guest (support/live_xml_vs_qemu.h: where each PCI device sits behind
// which bridge, slot, function, media, MACs, chardevs, memory, DIMMs), and `qlaunch
// domxml-to-native` of that XML gives the -device options of the running QEMU's own command
// line, word for word; domblklist and domiflist as virsh prints them; and clear errors for an
// unknown domain and for one whose QEMU is gone (whose XML `dumpxml --inactive` still prints).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "support/launch_env.h"
#include "support/live_xml_vs_qemu.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The -device values of an argv, in order.
std::vector<std::string> DeviceOptions(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-device") out.push_back(argv[i + 1]);
  return out;
}

std::vector<std::string> Cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> out;
  for (std::string word; std::getline(in, word, '\0');) out.push_back(word);
  return out;
}

class DumpxmlTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    const fs::path disk = tmp() / "disk.qcow2";
    RunResult img = RunningProcess({"/usr/bin/qemu-img", "create", "-q", "-f", "qcow2", disk.string(), "16M"}, {}).Wait();
    ASSERT_EQ(img.exit_code, 0) << img.Describe();
    xml_ = (tmp() / "dx.xml").string();
    std::ofstream(xml_) << "<domain type='qemu'>\n  <name>dx</name>\n  <maxMemory slots='2' unit='MiB'>512</maxMemory>\n"
                           "  <memory unit='MiB'>192</memory>\n  <vcpu>1</vcpu>\n"
                           "  <os><type arch='x86_64' machine='q35'>hvm</type></os>\n  <features><acpi/></features>\n"
                           "  <cpu><numa><cell id='0' cpus='0' memory='128' unit='MiB'/></numa></cpu>\n"
                           "  <devices>\n    <emulator>" << kQemu72 << "</emulator>\n"
                           "    <disk type='file' device='disk'>\n      <driver name='qemu' type='qcow2'/>\n"
                           "      <source file='" << disk.string() << "'/>\n      <target dev='vda' bus='virtio'/>\n"
                           "    </disk>\n"
                           "    <disk type='file' device='cdrom'>\n      <driver name='qemu' type='raw'/>\n"
                           "      <target dev='sda' bus='sata'/>\n      <readonly/>\n    </disk>\n"
                           "    <interface type='user'>\n      <model type='virtio'/>\n    </interface>\n"
                           "    <serial type='pty'/>\n    <console type='pty'/>\n"
                           "    <channel type='unix'>\n      <source mode='bind'/>\n"
                           "      <target type='virtio' name='org.qemu.guest_agent.0'/>\n    </channel>\n"
                           "    <graphics type='vnc' port='-1' autoport='yes'/>\n"
                           "    <memory model='dimm'><target><size unit='MiB'>64</size><node>0</node></target></memory>\n"
                           "  </devices>\n</domain>\n";
    RunResult r = Qlaunch({"start", "--json", xml_});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    pid_ = json::parse(r.out).at("pid").get<pid_t>();
  }
  void TearDown() override {
    if (pid_ > 0 && !PidGone(pid_)) Qlaunch({"destroy", "dx"});
    LaunchTest::TearDown();
  }

  std::string xml_;
  pid_t pid_ = 0;
};

TEST_F(DumpxmlTest, LiveXmlGivesBackTheRunningDevicesAndAddresses) {
  RunResult dump = Qlaunch({"dumpxml", "dx"});
  ASSERT_EQ(dump.exit_code, 0) << dump.Describe();
  const std::string& live = dump.out;
  EXPECT_NE(live.find("<domain type=\"qemu\" id=\"" + std::to_string(pid_) + "\">"), std::string::npos) << live;
  for (const char* alias : {"virtio-disk0", "sata0-0-0", "net0", "serial0", "channel0", "balloon0", "pcie.0", "ide",
                            "pci.1", "virtio-serial0", "video0", "dimm0"})
    EXPECT_NE(live.find("<alias name=\"" + std::string(alias) + "\"/>"), std::string::npos) << alias << "\n" << live;
  EXPECT_TRUE(std::regex_search(live, std::regex("<mac address=\"52:54:00(:[0-9a-f]{2}){3}\"/>"))) << live;
  EXPECT_TRUE(std::regex_search(live, std::regex("<graphics type=\"vnc\" port=\"59[0-9][0-9]\" autoport=\"yes\" listen=\"127.0.0.1\">")))
      << live;
  EXPECT_TRUE(std::regex_search(live, std::regex("<serial type=\"pty\" tty=\"/dev/pts/[0-9]+\">"))) << live;
  EXPECT_NE(live.find("path=\"" + (DomainStateDir("dx") / "channel/org.qemu.guest_agent.0").string() + "\""),
            std::string::npos) << live;

  // The live XML, planned again: the running QEMU's -device options, word for word.
  const fs::path live_path = tmp() / "live.xml";
  std::ofstream(live_path) << live;
  RunResult native = Qlaunch({"domxml-to-native", "--format", "json", live_path.string()});
  ASSERT_EQ(native.exit_code, 0) << native.Describe();
  EXPECT_EQ(native.err, "") << "the live XML is news to the parser";
  std::vector<std::string> running = DeviceOptions(Cmdline(pid_));
  ASSERT_GE(running.size(), 8u);
  // The DIMM's base= is where QEMU put it (query-memory-devices, compared below): planned again, addr=.
  std::smatch base;
  ASSERT_TRUE(std::regex_search(live, base, std::regex("<address type=\"dimm\" slot=\"0\" base=\"(0x[0-9a-f]+)\"/>")))
      << live;
  for (std::string& d : running)
    if (d.rfind("pc-dimm,", 0) == 0) d += ",addr=" + std::to_string(std::stoull(base[1], nullptr, 16));
  EXPECT_EQ(DeviceOptions(json::parse(native.out).at("argv")), running) << live;

  // --inactive: the XML as given, byte for byte.
  RunResult inactive = Qlaunch({"dumpxml", "--inactive", "dx"});
  EXPECT_EQ(inactive.exit_code, 0) << inactive.Describe();
  EXPECT_EQ(inactive.out, Slurp(xml_));
}

// Not the planner read back (the round trip above cannot see what the live XML drops and the
// planner derives again): what QEMU reports of the running guest.
TEST_F(DumpxmlTest, LiveXmlSaysWhereQemuPutEachDevice) {
  RunResult dump = Qlaunch({"dumpxml", "dx"});
  ASSERT_EQ(dump.exit_code, 0) << dump.Describe();
  const LiveXmlVsQemu c = CompareLiveXmlWithQemu(dump.out, MonitorOf("dx", [this](const std::vector<std::string>& a) {
                                                   return Qlaunch(a);
                                                 }));
  std::string mismatches;
  for (const std::string& m : c.mismatch) mismatches += m + "\n";
  EXPECT_EQ(mismatches, "") << dump.out;
  // Each comparison ran on what this domain has: none passed for want of something to compare.
  std::vector<std::string> checked = c.checked, want = {
      "chardev channel channel0", "chardev console serial0", "chardev serial serial0", "currentMemory",
      "dimm dimm0", "disk sda", "disk vda", "mac net0", "memory", "numa cell 0", "pci balloon0", "pci ide",
      "pci net0", "pci usb", "pci video0", "pci virtio-disk0", "pci virtio-serial0", "vcpus", "virtio-serial channel0",
      "vnc"};
  for (int i = 1; i <= 6; ++i)
    for (const char* what : {"pci pci.", "root port pci.", "type pci."}) want.push_back(what + std::to_string(i));
  std::sort(checked.begin(), checked.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(checked, want);
}

TEST_F(DumpxmlTest, DisksAndInterfacesAsVirshListsThem) {
  RunResult blk = Qlaunch({"domblklist", "dx"});
  ASSERT_EQ(blk.exit_code, 0) << blk.Describe();
  const std::string disk = (tmp() / "disk.qcow2").string();
  EXPECT_EQ(blk.out, " Target   Source\n" + std::string(6 + disk.size() + 6, '-') + "\n vda      " + disk +
                         "\n sda      -\n\n");
  RunResult details = Qlaunch({"domblklist", "--details", "dx"});
  ASSERT_EQ(details.exit_code, 0) << details.Describe();
  EXPECT_EQ(details.out, " Type   Device   Target   Source\n" + std::string(4 + 6 + 6 + disk.size() + 12, '-') +
                             "\n file   disk     vda      " + disk + "\n file   cdrom    sda      -\n\n");
  RunResult blk_json = Qlaunch({"domblklist", "--json", "dx"});
  ASSERT_EQ(blk_json.exit_code, 0) << blk_json.Describe();
  EXPECT_EQ(json::parse(blk_json.out),
            json::parse(R"([{"type":"file","device":"disk","target":"vda","source":")" + disk +
                        R"("},{"type":"file","device":"cdrom","target":"sda","source":null}])"));

  RunResult ifl = Qlaunch({"domiflist", "--json", "dx"});
  ASSERT_EQ(ifl.exit_code, 0) << ifl.Describe();
  const json nics = json::parse(ifl.out);
  ASSERT_EQ(nics.size(), 1u) << ifl.out;
  EXPECT_EQ(nics[0]["interface"], nullptr);
  EXPECT_EQ(nics[0]["type"], "user");
  EXPECT_EQ(nics[0]["source"], nullptr);
  EXPECT_EQ(nics[0]["model"], "virtio");
  const std::string mac = nics[0]["mac"];
  // The MAC QEMU's NIC has (`info network`), the one qlaunch derived for it.
  RunResult net = Qlaunch({"qemu-monitor-command", "--hmp", "dx", "info network"});
  EXPECT_NE(net.out.find("macaddr=" + mac), std::string::npos) << net.out;
  RunResult table = Qlaunch({"domiflist", "dx"});
  ASSERT_EQ(table.exit_code, 0) << table.Describe();
  EXPECT_EQ(table.out, " Interface   Type   Source   Model    MAC\n" + std::string(9 + 4 + 6 + 6 + 17 + 15, '-') +
                           "\n -           user   -        virtio   " + mac + "\n\n");
}

TEST_F(DumpxmlTest, UnknownAndGoneDomainsGetClearErrors) {
  for (const char* verb : {"dumpxml", "domblklist", "domiflist"}) {
    RunResult r = Qlaunch({verb, "nosuch"});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("domain nosuch is not running (qlaunch has no domain of that name in " + StateDir().string() + ")"),
              std::string::npos) << r.Describe();
  }
  RunResult inactive_unknown = Qlaunch({"dumpxml", "--inactive", "nosuch"});
  EXPECT_EQ(inactive_unknown.exit_code, 1) << inactive_unknown.Describe();
  EXPECT_NE(inactive_unknown.err.find("domain nosuch is not running (qlaunch has no domain of that name"),
            std::string::npos) << inactive_unknown.Describe();
  RunResult bad_name = Qlaunch({"dumpxml", "../etc"});
  EXPECT_EQ(bad_name.exit_code, 1) << bad_name.Describe();
  // Refused as a name before any directory is looked at (a defined domain's file or a state dir).
  EXPECT_NE(bad_name.err.find("invalid domain name '../etc'"), std::string::npos) << bad_name.Describe();

  // Its QEMU killed outright: the entry stays until the next list, destroy or start.
  ASSERT_EQ(::kill(pid_, SIGKILL), 0);
  for (int i = 0; i < 100 && !PidGone(pid_); ++i) usleep(50000);
  ASSERT_TRUE(PidGone(pid_));
  for (const char* verb : {"dumpxml", "domblklist", "domiflist"}) {
    RunResult r = Qlaunch({verb, "dx"});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("domain dx is not running (its QEMU is gone); `qlaunch dumpxml --inactive dx` prints the "
                         "XML it was started with"),
              std::string::npos) << r.Describe();
  }
  RunResult inactive = Qlaunch({"dumpxml", "--inactive", "dx"});
  EXPECT_EQ(inactive.exit_code, 0) << inactive.Describe();
  EXPECT_EQ(inactive.out, Slurp(xml_));
  EXPECT_TRUE(fs::exists(DomainStateDir("dx"))) << "a read-only verb removed the entry";
  ASSERT_EQ(Qlaunch({"list"}).exit_code, 0);  // cleans the stale entry up
  RunResult after = Qlaunch({"dumpxml", "--inactive", "dx"});
  EXPECT_EQ(after.exit_code, 1) << after.Describe();
  EXPECT_NE(after.err.find("domain dx is not running (qlaunch has no domain of that name"), std::string::npos)
      << after.Describe();
}

}  // namespace
}  // namespace qlaunch::testing
