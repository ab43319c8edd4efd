// attach-device and detach-device against libvirt 9.0. The same TCG q35 guest (a virtio disk,
// a virtio-scsi and a virtio-serial controller, spare root ports) runs under `virsh create` and
// under `qlaunch start`; the same device files are attached one after the other (a virtio disk,
// a scsi disk, a scsi cdrom, a usb disk, a user NIC, a bridge NIC, an rng, a channel, a scsi
// controller), then detached in
// reverse. After every step both QEMUs report the same devices (info qtree types, query-block,
// query-chardev, info network, info usb) and both live XMLs the same PCI addresses and aliases.
// qlaunch also gives each image to QEMU's user while attached and back afterwards, and leaves no
// tap. Then hostile input and failures: each a clear error with the guest and the state dir
// untouched; a qlaunch killed mid-change is recovered by the next command.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "launcher/lifecycle/change/pci_addresses_of.h"
#include "support/device_facts.h"
#include "support/hardware.h"
#include "support/launch_env.h"
#include "support/libvirt.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Outside the test's 0700 temporary dir: libvirt's QEMU opens the images too.
constexpr const char* kImages = "/tmp/qlaunch-hotplug";
constexpr const char* kBridge = "qlhp-br0";
constexpr const char* kName = "hp";

std::string DomainXml(const std::string& type) {
  std::string ports;
  for (int i = 1; i <= 10; ++i)
    ports += "    <controller type='pci' index='" + std::to_string(i) + "' model='pcie-root-port'/>\n";
  return "<domain type='" + type + "'>\n  <name>" + kName + "</name>\n  <memory unit='MiB'>128</memory>\n"
         "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='q35'>hvm</type></os>\n  <devices>\n"
         "    <emulator>" + kQemu72 + "</emulator>\n"
         "    <controller type='pci' index='0' model='pcie-root'/>\n" + ports +
         "    <controller type='scsi' index='0' model='virtio-scsi'/>\n"
         "    <controller type='virtio-serial' index='0'/>\n"
         "    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw'/>\n"
         "      <source file='" + kImages + "/vda.raw'/>\n      <target dev='vda' bus='virtio'/>\n    </disk>\n"
         "    <interface type='user'>\n      <mac address='52:54:00:71:00:00'/>\n      <model type='virtio'/>\n"
         "    </interface>\n    <memballoon model='none'/>\n  </devices>\n</domain>\n";
}

struct DeviceFile {
  const char* name;
  std::string xml;
  std::string image;  // the file QEMU's user gets while it is attached ("" for none)
};

std::vector<DeviceFile> Devices() {
  const std::string d = kImages;
  return {
      {"vdb", "<disk type='file' device='disk'>\n  <driver name='qemu' type='raw'/>\n  <source file='" + d +
                  "/vdb.raw'/>\n  <target dev='vdb' bus='virtio'/>\n</disk>\n", d + "/vdb.raw"},
      {"sdb", "<disk type='file' device='disk'>\n  <driver name='qemu' type='raw'/>\n  <source file='" + d +
                  "/sdb.raw'/>\n  <target dev='sdb' bus='scsi'/>\n</disk>\n", d + "/sdb.raw"},
      {"sdc", "<disk type='file' device='cdrom'>\n  <driver name='qemu' type='raw'/>\n  <source file='" + d +
                  "/cd.iso'/>\n  <target dev='sdc' bus='scsi'/>\n  <readonly/>\n</disk>\n", d + "/cd.iso"},
      {"usb-disk", "<disk type='file' device='disk'>\n  <driver name='qemu' type='raw'/>\n  <source file='" + d +
                       "/usb.raw'/>\n  <target dev='sdd' bus='usb'/>\n</disk>\n", d + "/usb.raw"},
      {"user-nic", "<interface type='user'>\n  <mac address='52:54:00:71:00:01'/>\n  <model type='virtio'/>\n</interface>\n", ""},
      {"bridge-nic", std::string("<interface type='bridge'>\n  <source bridge='") + kBridge +
                         "'/>\n  <mac address='52:54:00:71:00:02'/>\n  <model type='e1000e'/>\n</interface>\n", ""},
      {"rng", "<rng model='virtio'>\n  <backend model='random'>/dev/urandom</backend>\n</rng>\n", ""},
      // libvirt matches a channel to detach by its source too: a path both sides know.
      {"channel", "<channel type='unix'>\n  <source mode='bind' path='" + d + "/channel.sock'/>\n"
                  "  <target type='virtio' name='org.qlaunch.test.0'/>\n</channel>\n", ""},
      {"scsi-controller", "<controller type='scsi' index='1' model='virtio-scsi'/>\n", ""},
  };
}

int BridgePorts() {
  int n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(fs::path("/sys/class/net") / kBridge / "brif", ec);
       !ec && it != fs::directory_iterator(); ++it)
    ++n;
  return n;
}

uid_t OwnerOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
}

class AttachDeviceTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (taps, image owners, libvirt's qemu:///system)";
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    fs::create_directories(kImages);
    fs::permissions(kImages, fs::perms(01777));  // libvirt's QEMU makes its channel socket here
    for (const char* image : {"vda.raw", "vdb.raw", "sdb.raw", "usb.raw", "cd.iso", "cd2.iso", "x,format=qcow2.raw"}) {
      const fs::path p = fs::path(kImages) / image;
      std::ofstream(p, std::ios::trunc) << std::string(1 << 20, '\0');
      ASSERT_EQ(::chown(p.c_str(), 0, 0), 0);
      fs::permissions(p, fs::perms(0644));
    }
    if (!fs::exists(fs::path("/sys/class/net") / kBridge))
      made_bridge_ = std::system((std::string("ip link add ") + kBridge + " type bridge && ip link set " + kBridge +
                                  " up").c_str()) == 0;
    ASSERT_TRUE(fs::exists(fs::path("/sys/class/net") / kBridge)) << "cannot make the bridge " << kBridge;
    type_ = "qemu";  // not a test of the accelerator: TCG everywhere
    xml_ = (tmp() / "hp.xml").string();
    std::ofstream(xml_) << DomainXml(type_);
    for (const DeviceFile& d : Devices()) std::ofstream(tmp() / (std::string(d.name) + ".xml")) << d.xml;
  }
  void TearDown() override {
    Qlaunch({"destroy", kName});
    if (made_bridge_) std::system((std::string("ip link del ") + kBridge).c_str());
    std::error_code ec;
    fs::remove_all(kImages, ec);
    LaunchTest::TearDown();
  }

  std::string File(const std::string& device) const { return (tmp() / (device + ".xml")).string(); }

  // What the test compares after each step.
  static json Step(const std::string& what, const Monitor& ask, const std::string& live_xml) {
    json f = DeviceFacts(ask);
    json out = {{"step", what}, {"errors", f["errors"]}};
    for (const char* k : {"qtree", "block", "chardev", "network", "usb"}) out[k] = f[k];
    out["pci"] = launcher::PciAddressesOf(live_xml, what, /*with_alias=*/true);
    return out;
  }

  std::string type_, xml_;
  bool made_bridge_ = false;
};

// Without a guest OS nobody answers a PCIe unplug request: those devices stay (on both sides, as
// libvirt too keeps them until QEMU reports them gone), while the scsi and usb disks and the
// channel go at once. tests/attach_device_boot_test.cc has a guest that lets PCI devices go.
TEST_F(AttachDeviceTest, EachDeviceComesAndGoesAsUnderLibvirt) {
  if (const std::string& why = LibvirtUnreachable(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<DeviceFile> devices = Devices();
  auto goes_at_once = [](const std::string& name) {
    return name == "sdb" || name == "sdc" || name == "usb-disk" || name == "channel";
  };
  std::map<std::string, int> exits;  // "attach-device vdb" -> qlaunch's exit status
  std::map<std::string, uid_t> owners;  // the image's owner after qlaunch's step
  auto sequence = [&](const std::function<RunResult(const std::vector<std::string>&)>& run,
                      const std::vector<std::string>& attach, const std::vector<std::string>& detach, bool ours) {
    const Monitor ask = MonitorOf(kName, run);
    std::vector<json> steps;
    auto live = [&] { return run({"dumpxml", kName}).out; };
    auto step = [&](const std::vector<std::string>& verb, const DeviceFile& d) {
      std::vector<std::string> args = verb;
      args.push_back(File(d.name));
      RunResult r = run(args);
      const std::string what = verb[0] + " " + d.name;
      if (ours) {
        exits[what] = r.exit_code;
        if (!d.image.empty()) owners[what] = OwnerOf(d.image);
      }
      // qlaunch says when the guest has not released a device yet (3); virsh does not.
      const bool pending_ok = ours && verb[0] == "detach-device" && !goes_at_once(d.name);
      EXPECT_TRUE(r.exit_code == 0 || (pending_ok && r.exit_code == 3)) << what << ": " << r.Describe();
      steps.push_back(Step(what, ask, live()));
    };
    steps.push_back(Step("started", ask, live()));
    for (const DeviceFile& d : devices) step(attach, d);
    for (auto it = devices.rbegin(); it != devices.rend(); ++it) step(detach, *it);
    return steps;
  };

  const int ports_before = BridgePorts();
  Virsh({"destroy", kName});  // a leftover of an aborted run
  RunResult created = Virsh({"create", xml_});
  ASSERT_EQ(created.exit_code, 0) << created.Describe();
  const std::vector<json> libvirt =
      sequence([](const std::vector<std::string>& a) { return Virsh(a); }, {"attach-device", "--live", kName},
               {"detach-device", "--live", kName}, false);
  Virsh({"destroy", kName});
  ASSERT_EQ(BridgePorts(), ports_before);
  // libvirt leaves a read-only image (the cdrom's) to its QEMU user: root's again for qlaunch's run.
  for (const DeviceFile& d : devices)
    if (!d.image.empty()) {
      ASSERT_EQ(::chown(d.image.c_str(), 0, 0), 0);
    }

  RunResult started = Qlaunch({"start", xml_});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  const std::vector<json> ours = sequence([&](const std::vector<std::string>& a) { return Qlaunch(a); },
                                          {"attach-device", kName}, {"detach-device", kName}, true);
  ASSERT_EQ(ours.size(), libvirt.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(libvirt[i]["errors"], json::array()) << libvirt[i]["step"];
    EXPECT_EQ(ours[i]["errors"], json::array()) << ours[i]["step"];
    for (const char* k : {"qtree", "block", "chardev", "network", "usb", "pci"})
      EXPECT_EQ(ours[i][k], libvirt[i][k]) << ours[i]["step"] << ": " << k << " differs\n  libvirt: "
                                           << libvirt[i][k].dump() << "\n  qlaunch: " << ours[i][k].dump();
  }
  // The images: QEMU's user's while attached; root's again once the guest let go of them.
  for (const DeviceFile& d : devices) {
    if (d.image.empty()) continue;
    const std::string name = d.name;
    EXPECT_NE(owners["attach-device " + name], 0u) << name << " was not given to QEMU's user";
    EXPECT_EQ(exits["detach-device " + name], goes_at_once(name) ? 0 : 3) << name;
    if (exits["detach-device " + name] == 0) {
      EXPECT_EQ(owners["detach-device " + name], 0u) << name << " was not given back";
    } else {
      EXPECT_NE(owners["detach-device " + name], 0u) << name << " given back while QEMU still has it";
    }
  }
  EXPECT_EQ(BridgePorts(), ports_before + 1) << "the bridge NIC the guest has not released lost its tap";
  EXPECT_FALSE(fs::exists(DomainStateDir(kName) / "change.json"));
  EXPECT_FALSE(fs::exists(std::string(kImages) + "/channel.sock")) << "the detached channel's socket is left";
  EXPECT_TRUE(fs::exists(DomainStateDir(kName) / "detaching.json"));
  RunResult gone = Qlaunch({"destroy", kName});
  EXPECT_EQ(gone.exit_code, 0) << gone.Describe();
  EXPECT_EQ(BridgePorts(), ports_before) << "a tap outlived its domain";
  for (const DeviceFile& d : devices)
    if (!d.image.empty()) {
      EXPECT_EQ(OwnerOf(d.image), 0u) << d.image << " not given back after destroy";
    }
}

// Each refused change: exit status 1, an error naming what and where, and the guest, its devices
// and the state dir exactly as before.
TEST_F(AttachDeviceTest, HostileInputLeavesTheGuestAsItWas) {
  RunResult started = Qlaunch({"start", xml_});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  const Monitor ask = MonitorOf(kName, [this](const std::vector<std::string>& a) { return Qlaunch(a); });
  auto now = [&] {
    json s = Step("now", ask, Qlaunch({"dumpxml", kName}).out);
    s["blklist"] = Qlaunch({"domblklist", kName}).out;
    return s;
  };
  const json before = now();
  ASSERT_EQ(before["errors"], json::array()) << "the facts compared after each refusal must be readable";
  struct Case {
    const char* verb;
    std::string xml;
    std::string error;
    std::map<std::string, std::string> env = {};
  };
  const std::string d = kImages;
  const std::vector<Case> cases = {
      {"detach-device", "<disk type='file'>\n  <source file='" + d + "/vdb.raw'/>\n  <target dev='vdz' bus='virtio'/>\n</disk>\n",
       ":1: error: <disk>: the running domain has no disk with target 'vdz'"},
      {"attach-device", "<disk type='file'>\n  <source file='" + d + "/y.raw,format=qcow2'/>\n  <target dev='vdb' bus='virtio'/>\n</disk>\n",
       ":1: error: <disk>: " + d + "/y.raw,format=qcow2: No such file or directory"},
      {"attach-device", "<disk type='file'>\n  <source file='" + d + "/vdb.raw'/>\n  <target dev='vda' bus='virtio'/>\n</disk>\n",
       ":1: error: <disk>: target 'vda' is already used by a disk of the running domain"},
      {"attach-device", "<interface type='user'>\n  <mac address='52:54:00:71:00:00'/>\n</interface>\n",
       ":2: error: <mac>: MAC address 52:54:00:71:00:00 is already used by an interface of the running domain"},
      {"attach-device", "<disk type='file'>\n  <source file='" + d + "/vdb.raw'/>\n  <target dev='vdb' bus='virtio'/>\n"
                        "  <address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x0'/>\n</disk>\n",
       ":1: error: <disk>: PCI address 0000:01:00.0 is already used by <"},
      {"detach-device", "<channel type='unix'>\n  <target type='virtio' name='nope'/>\n</channel>\n",
       ":1: error: <channel>: the running domain has no channel named 'nope'"},
      {"attach-device", "<watchdog model='i6300esb'/>\n", ":1: error: <watchdog>: qlaunch cannot attach a <watchdog>"},
      {"attach-device", "<disk type='file'>\n  <source file='" + d + "/vdb.raw'/>\n  <target dev='vdb' bus='virtio'/>\n</disk>\n",
       "fault injected at device_add (QLAUNCH_HOTPLUG_FAULT); the domain is unchanged", {{"QLAUNCH_HOTPLUG_FAULT", "device_add"}}},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string file = (tmp() / ("hostile" + std::to_string(n++) + ".xml")).string();
    std::ofstream(file) << c.xml;
    RunResult r = Qlaunch({c.verb, kName, file}, c.env);
    EXPECT_EQ(r.exit_code, 1) << c.xml << r.Describe();
    EXPECT_NE(r.err.find(c.error), std::string::npos) << "want: " << c.error << "\n" << r.Describe();
    json after = now();
    after["step"] = before["step"];
    EXPECT_EQ(after, before) << c.xml << ": the guest or its record changed";
    EXPECT_FALSE(fs::exists(DomainStateDir(kName) / "change.json")) << c.xml;
    EXPECT_FALSE(fs::exists(DomainStateDir(kName) / "running.xml")) << c.xml;
    EXPECT_EQ(OwnerOf(d + "/vdb.raw"), 0u) << c.xml << ": the image was not given back";
  }
  RunResult persistent = Qlaunch({"attach-device", "--persistent", kName, File("vdb")});
  EXPECT_EQ(persistent.exit_code, 1);
  EXPECT_NE(persistent.err.find("--persistent changes a stored definition, and qlaunch keeps none"), std::string::npos)
      << persistent.Describe();

  // A file name with QEMU's option syntax in it is one file name (a scsi disk: it goes at once).
  const std::string odd = d + "/x,format=qcow2.raw";
  const std::string odd_xml = (tmp() / "odd.xml").string();
  std::ofstream(odd_xml) << "<disk type='file'>\n  <source file='" << odd << "'/>\n  <target dev='sdd' bus='scsi'/>\n</disk>\n";
  RunResult odd_attach = Qlaunch({"attach-device", "--json", kName, odd_xml});
  ASSERT_EQ(odd_attach.exit_code, 0) << odd_attach.Describe();
  EXPECT_EQ(json::parse(odd_attach.out).at("alias"), "scsi0-0-0-3");
  EXPECT_NE(Qlaunch({"domblklist", kName}).out.find(" sdd      " + odd), std::string::npos);
  EXPECT_NE(Qlaunch({"qemu-monitor-command", kName, "{\"execute\":\"query-block\"}"}).out.find(odd), std::string::npos);
  RunResult odd_detach = Qlaunch({"detach-device", kName, odd_xml});
  EXPECT_EQ(odd_detach.exit_code, 0) << odd_detach.Describe();
  json after = now();
  after["step"] = before["step"];
  EXPECT_EQ(after, before);
}

// A qlaunch killed after QEMU took the device but before the state dir recorded it: the next
// attach-device finds change.json, sees the device in QEMU and records it. (scsi disks and a
// channel: QEMU lets them go at once, with no guest to ask.)
TEST_F(AttachDeviceTest, AChangeCutShortIsFinishedByTheNextCommand) {
  RunResult started = Qlaunch({"start", xml_});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  RunResult killed = Qlaunch({"attach-device", kName, File("sdb")}, {{"QLAUNCH_HOTPLUG_FAULT", "crash"}});
  EXPECT_EQ(killed.exit_code, 9) << killed.Describe();
  EXPECT_TRUE(fs::exists(DomainStateDir(kName) / "change.json"));
  EXPECT_EQ(Qlaunch({"domblklist", kName}).out.find("sdb"), std::string::npos) << "recorded before it was finished";
  RunResult next = Qlaunch({"attach-device", kName, File("channel")});
  ASSERT_EQ(next.exit_code, 0) << next.Describe();
  EXPECT_FALSE(fs::exists(DomainStateDir(kName) / "change.json"));
  const std::string blk = Qlaunch({"domblklist", kName}).out;
  EXPECT_NE(blk.find(" sdb      " + std::string(kImages) + "/sdb.raw"), std::string::npos) << blk;
  EXPECT_NE(Qlaunch({"dumpxml", kName}).out.find("<alias name=\"channel0\"/>"), std::string::npos);
  for (const char* dev : {"sdb", "channel"}) {
    RunResult r = Qlaunch({"detach-device", kName, File(dev)});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
  }
  EXPECT_EQ(OwnerOf(std::string(kImages) + "/sdb.raw"), 0u);
  EXPECT_EQ(Qlaunch({"domblklist", kName}).out.find("sdb"), std::string::npos);
  EXPECT_EQ(Qlaunch({"dumpxml", kName}).out.find("channel0"), std::string::npos);

  // change-media killed after QEMU took the new medium: the next command records it (and then
  // detaches the cdrom with the medium it really holds).
  const std::string cd = std::string(kImages) + "/cd.iso", cd2 = std::string(kImages) + "/cd2.iso";
  ASSERT_EQ(Qlaunch({"attach-device", kName, File("sdc")}).exit_code, 0);
  RunResult media = Qlaunch({"change-media", kName, "sdc", cd2}, {{"QLAUNCH_HOTPLUG_FAULT", "crash"}});
  EXPECT_EQ(media.exit_code, 9) << media.Describe();
  EXPECT_NE(Qlaunch({"domblklist", kName}).out.find(" sdc      " + cd), std::string::npos) << "recorded before it was finished";
  RunResult gone = Qlaunch({"detach-device", kName, File("sdc")});
  EXPECT_EQ(gone.exit_code, 0) << gone.Describe();
  // Left: vda's nodes only (sdb had libvirt-2, sdc libvirt-3, the changed medium libvirt-4).
  json nodes = json::parse(Qlaunch({"qemu-monitor-command", kName, R"({"execute":"query-named-block-nodes"})"}).out);
  std::vector<std::string> names;
  for (const json& n : nodes.at("return")) names.push_back(n.at("node-name"));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"libvirt-1-format", "libvirt-1-storage"}));
  EXPECT_EQ(OwnerOf(cd), 0u);
  EXPECT_EQ(OwnerOf(cd2), 0u);
  EXPECT_FALSE(fs::exists(DomainStateDir(kName) / "change.json"));
}

// QEMU dying in the middle of an attach (killed just before its device_add): the error says the
// domain ended with it, not that it is unchanged; nothing is left (no state, the image's owner back).
TEST_F(AttachDeviceTest, AQemuThatDiesDuringAnAttachIsReportedAsEnded) {
  RunResult started = Qlaunch({"start", xml_});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  RunResult r = Qlaunch({"attach-device", kName, File("sdb")}, {{"QLAUNCH_HOTPLUG_FAULT", "qemu-dies"}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("; QEMU has ended, and the domain with it (its log: "), std::string::npos) << r.Describe();
  EXPECT_EQ(r.err.find("unchanged"), std::string::npos) << r.Describe();
  RunResult list = Qlaunch({"list", "--json"});
  EXPECT_EQ(list.out, "[]\n") << list.Describe();
  EXPECT_FALSE(fs::exists(DomainStateDir(kName)));
  EXPECT_EQ(OwnerOf(std::string(kImages) + "/sdb.raw"), 0u);
}

// change-media and attach-device share libvirt's node counter, and a detached cdrom takes the
// medium it holds now with it: an attached scsi cdrom (libvirt-2), its medium changed
// (libvirt-3), a scsi disk attached (libvirt-4); the cdrom detached leaves no node of its media.
TEST_F(AttachDeviceTest, AChangedMediumLeavesWithItsCdrom) {
  RunResult started = Qlaunch({"start", xml_});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  const std::string cd2 = std::string(kImages) + "/cd2.iso";
  auto nodes = [&] {
    json all = json::parse(Qlaunch({"qemu-monitor-command", kName, R"({"execute":"query-named-block-nodes"})"}).out);
    std::vector<std::string> out;
    for (const json& n : all.at("return")) out.push_back(n.at("node-name"));
    std::sort(out.begin(), out.end());
    return out;
  };
  ASSERT_EQ(Qlaunch({"attach-device", kName, File("sdc")}).exit_code, 0);
  RunResult changed = Qlaunch({"change-media", kName, "sdc", cd2});
  ASSERT_EQ(changed.exit_code, 0) << changed.Describe();
  EXPECT_NE(OwnerOf(cd2), 0u);
  RunResult disk = Qlaunch({"attach-device", kName, File("sdb")});
  ASSERT_EQ(disk.exit_code, 0) << disk.Describe();
  EXPECT_EQ(nodes(), (std::vector<std::string>{"libvirt-1-format", "libvirt-1-storage", "libvirt-3-format",
                                                "libvirt-3-storage", "libvirt-4-format", "libvirt-4-storage"}));
  RunResult detached = Qlaunch({"detach-device", kName, File("sdc")});
  EXPECT_EQ(detached.exit_code, 0) << detached.Describe();
  EXPECT_EQ(nodes(), (std::vector<std::string>{"libvirt-1-format", "libvirt-1-storage", "libvirt-4-format",
                                                "libvirt-4-storage"}));
  EXPECT_EQ(OwnerOf(cd2), 0u) << "the changed medium was not given back";
  EXPECT_EQ(OwnerOf(std::string(kImages) + "/cd.iso"), 0u);
  EXPECT_EQ(Qlaunch({"domblklist", kName}).out.find("sdc"), std::string::npos);
}

}  // namespace
}  // namespace qlaunch::testing
