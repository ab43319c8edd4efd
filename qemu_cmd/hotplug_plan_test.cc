// The hot-plug planner: a device attached to a running domain gets what libvirt 9.0 gives it at
// run time (the next alias index, the next node name, the first free hotpluggable PCI slot), as
// QMP commands each paired with its undo; clashes are errors naming the device file and line.
#include "qemu_cmd/hotplug_plan.h"

#include <gtest/gtest.h>

#include "domain/parse_fragment.h"
#include "domain/parser.h"
#include "qemu_cmd/device_plan.h"
#include "support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using nlohmann::json;

// A running domain: the XML planned as at start; its records what plan.json would hold.
struct Running {
  domain::DomainDef def;
  RunningDomain domain;
};

Running Start(const std::string& machine, const std::string& devices) {
  Running r;
  r.def = domain::ParseDomainXml("<domain type='qemu'><name>d</name><memory unit='MiB'>128</memory><os><type machine='" +
                                     machine + "'>hvm</type></os>\n<devices>" + devices +
                                     // No implied USB controller or balloon: the root ports are the test's.
                                     "<controller type='usb' model='none'/><memballoon model='none'/></devices></domain>",
                                 "running.xml");
  static const QemuCaps caps = testing::Caps72();
  PlanOptions opts;
  DeviceContext ctx{&r.def, &caps, &opts, IsQ35(machine)};
  for (const PlannedDevice& d : PlanDevices(ctx))
    r.domain.devices.push_back({d.element, d.line, d.family, d.driver, d.id, d.props, d.slot});
  r.domain.def = &r.def;
  r.domain.node_index = static_cast<unsigned>(r.def.devices.disks.size());
  r.domain.channel_dir = "/run/qlaunch/d/channel";
  return r;
}

AttachPlan Attach(const Running& r, const std::string& xml) {
  return PlanAttach(r.domain, domain::ParseDeviceXml(xml, "dev.xml"), testing::Caps72());
}

std::vector<std::string> Commands(const AttachPlan& p) {
  std::vector<std::string> out;
  for (const HotplugStep& s : p.steps) out.push_back(s.call.execute + (s.undo.execute.empty() ? "" : "/" + s.undo.execute));
  return out;
}

std::string Prop(const DeviceRecord& d, const std::string& key) {
  for (const auto& [k, v] : d.props)
    if (k == key) return v;
  return "";
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const DiagnosticError& e) {
    return e.diagnostics().at(0).ToString();
  }
  return "no error";
}

constexpr const char* kRootPorts =
    "<controller type='pci' model='pcie-root'/>"
    "<controller type='pci' index='1' model='pcie-root-port'/><controller type='pci' index='2' model='pcie-root-port'/>"
    "<controller type='pci' index='3' model='pcie-root-port'/>";
constexpr const char* kVda =
    "<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='/i/a.raw'/><target dev='vda' "
    "bus='virtio'/></disk>";

TEST(PlanAttach, VirtioDiskTakesTheNextNodeNameAndTheFirstFreeRootPort) {
  const Running r = Start("q35", std::string(kRootPorts) + kVda);
  const AttachPlan p = Attach(r, "<disk type='file' device='disk'>\n<driver name='qemu' type='qcow2'/>"
                                 "<source file='/i/b.qcow2'/><target dev='vdb' bus='virtio'/></disk>");
  EXPECT_EQ(p.record.id, "virtio-disk1");
  EXPECT_EQ(p.record.driver, "virtio-blk-pci");
  ASSERT_TRUE(p.record.slot);
  EXPECT_EQ(p.record.slot->bus, "pci.2");  // pci.1 holds vda
  EXPECT_EQ(p.record.slot->slot, 0u);
  EXPECT_EQ(Prop(p.record, "drive"), "libvirt-2-format");
  EXPECT_EQ(p.node_index, 2u);
  EXPECT_EQ(p.files, std::vector<std::string>{"/i/b.qcow2"});
  EXPECT_EQ(Commands(p), (std::vector<std::string>{"blockdev-add/blockdev-del", "blockdev-add/blockdev-del", "device_add"}));
  EXPECT_EQ(p.steps[0].call.arguments["node-name"], "libvirt-2-storage");
  EXPECT_EQ(p.steps[0].call.arguments["filename"], "/i/b.qcow2");
  EXPECT_EQ(p.steps[1].call.arguments["driver"], "qcow2");
  EXPECT_EQ(p.steps[1].call.arguments["file"], "libvirt-2-storage");
  EXPECT_EQ(p.steps[1].undo.arguments, json({{"node-name", "libvirt-2-format"}}));
  EXPECT_EQ(p.steps[2].call.arguments,
            json({{"driver", "virtio-blk-pci"}, {"id", "virtio-disk1"}, {"drive", "libvirt-2-format"}, {"bus", "pci.2"},
                  {"addr", "0x0"}}));
}

TEST(PlanAttach, NodeNamesNeverComeBack) {
  Running r = Start("q35", std::string(kRootPorts) + kVda);
  r.domain.node_index = 7;  // disks came and went
  const AttachPlan p = Attach(r, "<disk type='file'><source file='/i/c.raw'/><target dev='vdc' bus='virtio'/></disk>");
  EXPECT_EQ(Prop(p.record, "drive"), "libvirt-8-format");
  EXPECT_EQ(p.node_index, 8u);
}

TEST(PlanAttach, ScsiDiskOnTheRunningController) {
  const Running r = Start("q35", std::string(kRootPorts) + "<controller type='scsi' index='0' model='virtio-scsi'/>");
  const AttachPlan p = Attach(r, "<disk type='file'><source file='/i/s.raw'/><target dev='sdb' bus='scsi'/></disk>");
  EXPECT_EQ(p.record.driver, "scsi-hd");
  EXPECT_EQ(p.record.id, "scsi0-0-0-1");
  EXPECT_FALSE(p.record.slot);
  EXPECT_EQ(Prop(p.record, "bus"), "scsi0.0");
  EXPECT_EQ(Prop(p.record, "drive"), "libvirt-1-format");
}

// At start a usb disk takes port 1 before the tablet; attached later it takes the first port
// the running devices leave free (libvirt's hot-plug), and the tablet keeps its port.
TEST(PlanAttach, UsbDiskOnTheFirstFreePort) {
  const Running r = Start("q35", std::string(kRootPorts) + "<controller type='usb' index='0' model='qemu-xhci'/>"
                                     "<input type='tablet' bus='usb'/>");
  const AttachPlan p = Attach(r, "<disk type='file'><source file='/i/u.raw'/><target dev='sdb' bus='usb'/></disk>");
  EXPECT_EQ(p.record.driver, "usb-storage");
  EXPECT_EQ(p.record.id, "usb-disk1");
  EXPECT_EQ(Prop(p.record, "bus"), "usb.0");
  EXPECT_EQ(Prop(p.record, "port"), "2");
  EXPECT_EQ(Prop(p.record, "removable"), "off");
  EXPECT_FALSE(p.record.slot);
}

// A scsi controller (the only controller libvirt hot-plugs) on a free root port; then its disks
// have a bus; a controller in use cannot be detached.
TEST(PlanAttach, ScsiControllerThenItsDisk) {
  const Running r = Start("q35", kRootPorts);
  const std::string disk = "<disk type='file'><source file='/i/s.raw'/><target dev='sda' bus='scsi'/></disk>";
  EXPECT_NE(ErrorOf([&] { Attach(r, disk); }).find("no scsi controller 'scsi0'"), std::string::npos);
  const AttachPlan c = Attach(r, "<controller type='scsi' index='0' model='virtio-scsi'/>");
  EXPECT_EQ(c.record.id, "scsi0");
  EXPECT_EQ(c.record.driver, "virtio-scsi-pci");
  EXPECT_EQ(c.record.slot->bus, "pci.1");
  EXPECT_EQ(Commands(c), std::vector<std::string>{"device_add"});
  EXPECT_NE(ErrorOf([&] { Attach(r, "<controller type='usb' model='qemu-xhci'/>"); })
                .find("'usb' controller cannot be hot plugged"),
            std::string::npos);
  const Running with = Start("q35", std::string(kRootPorts) + "<controller type='scsi' index='0' model='virtio-scsi'/>" +
                                        "<disk type='file'><source file='/i/s.raw'/><target dev='sda' bus='scsi'/></disk>");
  EXPECT_NE(ErrorOf([&] {
              PlanDetach(with.domain, domain::ParseDeviceXml("<controller type='scsi' index='0'/>", "c.xml"));
            }).find("the scsi controller scsi0 is in use by scsi0-0-0-0"),
            std::string::npos);
}

TEST(PlanAttach, EmptyCdromIsADeviceAlone) {
  const Running r = Start("q35", kRootPorts);
  const AttachPlan p = Attach(r, "<disk type='file' device='cdrom'><target dev='sdc' bus='sata'/></disk>");
  EXPECT_EQ(p.record.driver, "ide-cd");
  EXPECT_EQ(Commands(p), std::vector<std::string>{"device_add"});
  EXPECT_TRUE(p.files.empty());
}

TEST(PlanAttach, UserNicTakesTheNextNetIndexAndAMacOfItsOwn) {
  const Running r = Start("q35", std::string(kRootPorts) +
                                     "<interface type='user'><mac address='52:54:00:00:00:01'/><model type='virtio'/></interface>");
  const AttachPlan p = Attach(r, "<interface type='user'><model type='virtio'/></interface>");
  EXPECT_EQ(p.record.id, "net1");
  EXPECT_EQ(Prop(p.record, "netdev"), "hostnet1");
  EXPECT_NE(Prop(p.record, "mac"), "52:54:00:00:00:01");
  EXPECT_EQ(Prop(p.record, "mac").rfind("52:54:00:", 0), 0u);
  EXPECT_EQ(p.host_fd, AttachPlan::HostFd::kNone);
  EXPECT_EQ(Commands(p), (std::vector<std::string>{"netdev_add/netdev_del", "device_add"}));
  EXPECT_EQ(p.steps[0].call.arguments, json({{"type", "user"}, {"id", "hostnet1"}}));
  EXPECT_EQ(p.record.slot->bus, "pci.2");
}

TEST(PlanAttach, BridgeNicPassesItsTapFirst) {
  const Running r = Start("pc", "");
  const AttachPlan p = Attach(r, "<interface type='bridge'><source bridge='br0'/><mac address='52:54:00:aa:bb:cc'/>"
                                 "<model type='e1000'/></interface>");
  EXPECT_EQ(p.host_fd, AttachPlan::HostFd::kTap);
  EXPECT_EQ(Commands(p), (std::vector<std::string>{"getfd/closefd", "netdev_add/netdev_del", "device_add"}));
  EXPECT_TRUE(p.steps[0].call.pass_fd);
  EXPECT_EQ(p.steps[0].call.arguments["fdname"], p.fd_name);
  EXPECT_EQ(p.steps[1].call.arguments, json({{"type", "tap"}, {"fd", p.fd_name}, {"id", "hostnet0"}}));
  // pc: slot 1 is the PIIX3, 2 the first free one (no video here).
  EXPECT_EQ(p.record.slot->bus, "pci.0");
  EXPECT_EQ(p.record.slot->slot, 2u);
}

TEST(PlanAttach, RngAndChannel) {
  const Running r = Start("q35", std::string(kRootPorts) + "<controller type='virtio-serial' index='0'/>"
                                     "<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>");
  const AttachPlan rng = Attach(r, "<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>");
  EXPECT_EQ(rng.record.id, "rng0");
  EXPECT_EQ(Commands(rng), (std::vector<std::string>{"object-add/object-del", "device_add"}));
  EXPECT_EQ(rng.steps[0].call.arguments,
            json({{"qom-type", "rng-random"}, {"id", "objrng0"}, {"filename", "/dev/urandom"}}));
  const AttachPlan ch = Attach(r, "<channel type='unix'><source mode='bind'/><target type='virtio' name='org.example.1'/></channel>");
  EXPECT_EQ(ch.record.id, "channel1");
  EXPECT_EQ(ch.host_fd, AttachPlan::HostFd::kListenSocket);
  EXPECT_EQ(ch.socket_path, "/run/qlaunch/d/channel/org.example.1");
  EXPECT_EQ(Commands(ch), (std::vector<std::string>{"getfd/closefd", "chardev-add/chardev-remove", "device_add"}));
  EXPECT_EQ(ch.steps[1].call.arguments["backend"]["data"]["addr"], json({{"type", "fd"}, {"data", {{"str", ch.fd_name}}}}));
  EXPECT_EQ(Prop(ch.record, "bus"), "virtio-serial0.0");
  EXPECT_EQ(Prop(ch.record, "nr"), "2");
  EXPECT_EQ(Prop(ch.record, "chardev"), "charchannel1");
}

TEST(PlanAttach, ClashesAreErrorsNamingTheDeviceFile) {
  const Running r = Start("q35", std::string(kRootPorts) + kVda +
                                     "<interface type='user'><mac address='52:54:00:00:00:01'/><model type='virtio'/></interface>");
  EXPECT_EQ(ErrorOf([&] { Attach(r, "<disk type='file'>\n<source file='/i/x.raw'/><target dev='vda' bus='virtio'/></disk>"); }),
            "dev.xml:1: error: <disk>: target 'vda' is already used by a disk of the running domain (/i/a.raw)");
  EXPECT_EQ(ErrorOf([&] { Attach(r, "<interface type='user'>\n<mac address='52:54:00:00:00:01'/></interface>"); }),
            "dev.xml:2: error: <mac>: MAC address 52:54:00:00:00:01 is already used by an interface of the running domain");
  const std::string taken = ErrorOf([&] {
    Attach(r, "<disk type='file'><source file='/i/x.raw'/><target dev='vdb' bus='virtio'/>"
              "<address type='pci' domain='0' bus='1' slot='0' function='0'/></disk>");
  });
  EXPECT_NE(taken.find("dev.xml:1: error: <disk>: PCI address 0000:01:00.0 is already used by <interface alias='net0'>"),
            std::string::npos) << taken;
  EXPECT_NE(ErrorOf([&] { Attach(r, "<disk type='file'><source file='/i/s.raw'/><target dev='sda' bus='scsi'/></disk>"); })
                .find("no scsi controller 'scsi0'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { Attach(r, "<watchdog model='i6300esb'/>"); }).find("cannot attach a <watchdog>"), std::string::npos);
}

TEST(PlanAttach, NoFreeRootPortIsAnErrorThatSaysWhatToDo) {
  const Running r = Start("q35", "<controller type='pci' model='pcie-root'/><controller type='pci' index='1' "
                                 "model='pcie-root-port'/>" + std::string(kVda));
  const std::string e = ErrorOf([&] { Attach(r, "<interface type='user'/>"); });
  EXPECT_NE(e.find("dev.xml:1: error: <interface>: no free hotpluggable PCI slot"), std::string::npos) << e;
  EXPECT_NE(e.find("pcie-root-port"), std::string::npos) << e;
}

TEST(PlanDetach, FindsTheDeviceAsLibvirtMatchesIt) {
  const Running r = Start("q35", std::string(kRootPorts) + kVda +
                                     "<interface type='user'><mac address='52:54:00:00:00:01'/><model type='virtio'/></interface>"
                                     "<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>");
  const DetachPlan disk = PlanDetach(
      r.domain, domain::ParseDeviceXml("<disk type='file'><source file='/i/a.raw'/><target dev='vda'/></disk>", "dev.xml"));
  EXPECT_EQ(disk.id, "virtio-disk0");
  ASSERT_EQ(disk.release.size(), 2u);
  EXPECT_EQ(disk.release[0].arguments, json({{"node-name", "libvirt-1-format"}}));
  EXPECT_EQ(disk.release[1].arguments, json({{"node-name", "libvirt-1-storage"}}));
  const DetachPlan nic = PlanDetach(
      r.domain, domain::ParseDeviceXml("<interface type='user'><mac address='52:54:00:00:00:01'/></interface>", "d.xml"));
  EXPECT_EQ(nic.id, "net0");
  EXPECT_EQ(nic.release.at(0).execute, "netdev_del");
  const DetachPlan rng = PlanDetach(
      r.domain, domain::ParseDeviceXml("<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>", "d.xml"));
  EXPECT_EQ(rng.id, "rng0");
  EXPECT_EQ(rng.release.at(0).arguments, json({{"id", "objrng0"}}));
  EXPECT_EQ(ErrorOf([&] {
              PlanDetach(r.domain, domain::ParseDeviceXml("<disk type='file'>\n<source file='/i/z.raw'/><target dev='vdz'/></disk>", "dev.xml"));
            }),
            "dev.xml:1: error: <disk>: the running domain has no disk with target 'vdz'");
  EXPECT_NE(ErrorOf([&] {
              PlanDetach(r.domain, domain::ParseDeviceXml("<interface type='user'><mac address='52:54:00:00:00:09'/></interface>", "d.xml"));
            }).find("no interface with MAC 52:54:00:00:00:09"),
            std::string::npos);
}

}  // namespace
}  // namespace qlaunch::qemu
