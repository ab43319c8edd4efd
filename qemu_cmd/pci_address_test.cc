// AssignPciAddresses against what libvirt 9.0 gives (virsh domxml-to-native) for the same
// devices: each case lists the devices as the family planners emit them and the bus/addr
// libvirt chose.
#include "qemu_cmd/pci_address.h"

#include <gtest/gtest.h>

#include "common/diagnostic.h"

namespace qlaunch::qemu {
namespace {

PlannedDevice Dev(std::string driver, std::string id, PciRank rank, int order = 0, int line = 0) {
  PlannedDevice d;
  d.family = rank == PciRank::kController || rank == PciRank::kPciController ? "controller" : "x";
  d.driver = std::move(driver);
  d.id = std::move(id);
  d.pci = true;
  d.rank = rank;
  d.pci_order = order;
  d.element = d.family == "controller" ? "controller" : "device";
  d.line = line;
  return d;
}

PlannedDevice At(PlannedDevice d, unsigned bus, unsigned slot, unsigned function = 0) {
  d.address.type = "pci";
  d.address.bus = bus;
  d.address.slot = slot;
  d.address.function = function;
  return d;
}

// "bus addr[ mf]" of the device with that id (or driver, for devices without id).
std::string Where(const std::vector<PlannedDevice>& devices, const std::string& key) {
  for (const PlannedDevice& d : devices) {
    if (d.id != key && !(d.id.empty() && d.driver == key)) continue;
    if (!d.slot) return "unassigned";
    std::string s = d.slot->bus + " 0x" + ToHex(d.slot->slot);
    if (d.slot->function) s += ".0x" + ToHex(d.slot->function);
    if (d.slot->multifunction) s += " mf";
    return s;
  }
  return "missing";
}

std::string Prop(const std::vector<PlannedDevice>& devices, const std::string& id, const std::string& key) {
  for (const PlannedDevice& d : devices)
    if (d.id == id)
      for (const auto& [k, v] : d.props)
        if (k == key) return v;
  return "";
}

struct Fixture {
  domain::DomainDef def;
  DeviceContext ctx;
  explicit Fixture(bool q35) {
    def.file = "d.xml";
    def.os.machine = q35 ? "q35" : "pc";
    ctx.def = &def;
    ctx.q35 = q35;
  }
};

// virt-install-like q35 without any <controller type='pci'>: libvirt adds one root port per
// PCIe device, a root port + pcie-to-pci-bridge for the conventional ones, and a spare port.
TEST(AssignPciAddresses, Q35WithoutPciControllers) {
  Fixture f(true);
  std::vector<PlannedDevice> devs = {
      Dev("qemu-xhci", "usb", PciRank::kController, 0),
      Dev("virtio-serial-pci", "virtio-serial0", PciRank::kController, 3),
      Dev("virtio-blk-pci", "virtio-disk0", PciRank::kDisk),
      Dev("virtio-net-pci", "net0", PciRank::kNet),
      Dev("e1000", "net1", PciRank::kNet),
      Dev("VGA", "video0", PciRank::kPrimaryVideo),
      Dev("ich9-intel-hda", "sound0", PciRank::kSound),
      Dev("i6300esb", "watchdog0", PciRank::kWatchdog),
      Dev("virtio-balloon-pci", "balloon0", PciRank::kBalloon),
      Dev("virtio-rng-pci", "rng0", PciRank::kRng),
  };
  AssignPciAddresses(f.ctx, &devs);
  ASSERT_EQ(devs.size(), 19u);
  const char* ids[] = {"pci.1", "pci.2", "pci.3", "pci.4", "pci.5", "pci.6", "pci.7", "pci.8", "pci.9", "usb"};
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(devs[i].id, ids[i]);  // the PCI controllers first, by index
  EXPECT_EQ(devs[2].driver, "pcie-pci-bridge");
  EXPECT_EQ(devs[3].driver, "pcie-root-port");
  std::map<std::string, std::string> want = {
      {"pci.1", "pcie.0 0x2 mf"}, {"pci.2", "pcie.0 0x2.0x1"}, {"pci.3", "pci.1 0x0"},
      {"pci.4", "pcie.0 0x2.0x2"}, {"pci.9", "pcie.0 0x2.0x7"}, {"usb", "pci.4 0x0"},
      {"virtio-serial0", "pci.5 0x0"}, {"virtio-disk0", "pci.6 0x0"}, {"net0", "pci.2 0x0"},
      {"net1", "pci.3 0x1"}, {"video0", "pcie.0 0x1"}, {"sound0", "pcie.0 0x1b"},
      {"watchdog0", "pci.3 0x2"}, {"balloon0", "pci.7 0x0"}, {"rng0", "pci.8 0x0"},
  };
  for (const auto& [id, where] : want) EXPECT_EQ(Where(devs, id), where) << id;
  EXPECT_EQ(Prop(devs, "pci.4", "port"), "0x12");
  EXPECT_EQ(Prop(devs, "pci.4", "chassis"), "4");
  EXPECT_EQ(Prop(devs, "pci.3", "chassis"), "");
}

// virt-install --print-xml for q35 gives 14 pcie-root-ports; libvirt still adds a 15th for the
// pcie-to-pci-bridge the i6300esb needs.
TEST(AssignPciAddresses, Q35VirtInstallRootPorts) {
  Fixture f(true);
  std::vector<PlannedDevice> devs;
  for (int i = 1; i <= 14; ++i)
    devs.push_back(Dev("pcie-root-port", "pci." + std::to_string(i), PciRank::kPciController, i, 40 + i));
  for (PlannedDevice d : {Dev("qemu-xhci", "usb", PciRank::kController, 0),
                          Dev("virtio-serial-pci", "virtio-serial0", PciRank::kController, 20),
                          Dev("virtio-blk-pci", "virtio-disk0", PciRank::kDisk),
                          Dev("virtio-net-pci", "net0", PciRank::kNet),
                          Dev("virtio-vga", "video0", PciRank::kPrimaryVideo),
                          Dev("ich9-intel-hda", "sound0", PciRank::kSound),
                          Dev("i6300esb", "watchdog0", PciRank::kWatchdog),
                          Dev("virtio-balloon-pci", "balloon0", PciRank::kBalloon),
                          Dev("virtio-rng-pci", "rng0", PciRank::kRng)})
    devs.push_back(d);
  AssignPciAddresses(f.ctx, &devs);
  std::map<std::string, std::string> want = {
      {"pci.1", "pcie.0 0x2 mf"}, {"pci.8", "pcie.0 0x2.0x7"}, {"pci.9", "pcie.0 0x3 mf"},
      {"pci.15", "pcie.0 0x3.0x6"}, {"pci.16", "pci.1 0x0"}, {"usb", "pci.3 0x0"},
      {"virtio-serial0", "pci.4 0x0"}, {"virtio-disk0", "pci.5 0x0"}, {"net0", "pci.2 0x0"},
      {"video0", "pcie.0 0x1"}, {"sound0", "pcie.0 0x1b"}, {"watchdog0", "pci.16 0x1"},
      {"balloon0", "pci.6 0x0"}, {"rng0", "pci.7 0x0"},
  };
  for (const auto& [id, where] : want) EXPECT_EQ(Where(devs, id), where) << id;
  EXPECT_EQ(Prop(devs, "pci.15", "port"), "0x1e");
  EXPECT_EQ(Prop(devs, "pci.15", "chassis"), "15");
  EXPECT_EQ(devs[15].id, "pci.16");
  EXPECT_EQ(devs[15].driver, "pcie-pci-bridge");
}

// pc: video at slot 2, then nets, sound, controllers in libvirt's list order (virtio-serial
// first in the XML), ICH9 USB2 companions sharing one slot, the balloon last.
TEST(AssignPciAddresses, PcOrderAndUsbCompanions) {
  Fixture f(false);
  PlannedDevice uhci = Dev("ich9-usb-uhci1", "", PciRank::kController, 2);
  uhci.props = {{"masterbus", "usb.0"}, {"firstport", "0"}};
  std::vector<PlannedDevice> devs = {
      Dev("ich9-usb-ehci1", "usb", PciRank::kController, 1), uhci,
      Dev("lsi", "scsi0", PciRank::kController, 3),           Dev("ahci", "sata0", PciRank::kController, 4),
      Dev("virtio-serial-pci", "virtio-serial0", PciRank::kController, 0),
      Dev("e1000", "net0", PciRank::kNet),                    Dev("cirrus-vga", "video0", PciRank::kPrimaryVideo),
      Dev("AC97", "sound0", PciRank::kSound),                 Dev("virtio-balloon-pci", "balloon0", PciRank::kBalloon),
  };
  AssignPciAddresses(f.ctx, &devs);
  ASSERT_EQ(devs.size(), 9u);  // nothing added
  std::map<std::string, std::string> want = {
      {"usb", "pci.0 0x6.0x7"}, {"ich9-usb-uhci1", "pci.0 0x6 mf"}, {"scsi0", "pci.0 0x7"},
      {"sata0", "pci.0 0x8"},   {"virtio-serial0", "pci.0 0x5"},    {"net0", "pci.0 0x3"},
      {"video0", "pci.0 0x2"},  {"sound0", "pci.0 0x4"},            {"balloon0", "pci.0 0x9"},
  };
  for (const auto& [id, where] : want) EXPECT_EQ(Where(devs, id), where) << id;
}

// pc with more devices than pci.0 has slots: a pci-bridge at 0x3, the rest behind it.
TEST(AssignPciAddresses, PcFullRootBusGetsAPciBridge) {
  Fixture f(false);
  std::vector<PlannedDevice> devs = {Dev("piix3-usb-uhci", "usb", PciRank::kController)};
  for (int i = 0; i < 31; ++i) devs.push_back(Dev("e1000", "net" + std::to_string(i), PciRank::kNet));
  devs.push_back(Dev("VGA", "video0", PciRank::kPrimaryVideo));
  devs.push_back(Dev("virtio-balloon-pci", "balloon0", PciRank::kBalloon));
  AssignPciAddresses(f.ctx, &devs);
  EXPECT_EQ(devs[0].id, "pci.1");
  EXPECT_EQ(devs[0].driver, "pci-bridge");
  EXPECT_EQ(Prop(devs, "pci.1", "chassis_nr"), "1");
  EXPECT_EQ(Where(devs, "pci.1"), "pci.0 0x3");
  EXPECT_EQ(Where(devs, "usb"), "pci.0 0x1.0x2");
  EXPECT_EQ(Where(devs, "video0"), "pci.0 0x2");
  EXPECT_EQ(Where(devs, "net0"), "pci.0 0x4");
  EXPECT_EQ(Where(devs, "net27"), "pci.0 0x1f");
  EXPECT_EQ(Where(devs, "net28"), "pci.1 0x1");
  EXPECT_EQ(Where(devs, "net30"), "pci.1 0x3");
  EXPECT_EQ(Where(devs, "balloon0"), "pci.1 0x4");
}

TEST(AssignPciAddresses, ExplicitAddressesAreKept) {
  Fixture f(false);
  std::vector<PlannedDevice> devs = {At(Dev("e1000", "net0", PciRank::kNet), 0, 3),
                                     At(Dev("virtio-net-pci", "net1", PciRank::kNet), 0, 7),
                                     Dev("virtio-balloon-pci", "balloon0", PciRank::kBalloon),
                                     At(Dev("VGA", "video0", PciRank::kPrimaryVideo), 0, 0x1e)};
  AssignPciAddresses(f.ctx, &devs);
  EXPECT_EQ(Where(devs, "net0"), "pci.0 0x3");
  EXPECT_EQ(Where(devs, "net1"), "pci.0 0x7");
  EXPECT_EQ(Where(devs, "video0"), "pci.0 0x1e");
  EXPECT_EQ(Where(devs, "balloon0"), "pci.0 0x2");
}

TEST(AssignPciAddresses, Q35ExplicitRootPortsAndVideoElsewhere) {
  Fixture f(true);
  std::vector<PlannedDevice> devs = {
      At(Dev("pcie-root-port", "pci.1", PciRank::kPciController, 1), 0, 4),
      At(Dev("virtio-net-pci", "net0", PciRank::kNet), 1, 0),
      At(Dev("virtio-gpu-pci", "video0", PciRank::kPrimaryVideo), 0, 1),  // not a free-slot guess
  };
  devs[0].props = {{"port", "0x8"}, {"chassis", "7"}};
  AssignPciAddresses(f.ctx, &devs);
  ASSERT_EQ(devs.size(), 3u);
  EXPECT_EQ(Where(devs, "pci.1"), "pcie.0 0x4");
  EXPECT_EQ(Prop(devs, "pci.1", "port"), "0x8");
  EXPECT_EQ(Prop(devs, "pci.1", "chassis"), "7");
  EXPECT_EQ(Where(devs, "net0"), "pci.1 0x0");
}

TEST(AssignPciAddresses, ClashNamesBothElements) {
  Fixture f(false);
  std::vector<PlannedDevice> devs = {At(Dev("e1000", "net0", PciRank::kNet, 0, 12), 0, 5),
                                     At(Dev("virtio-balloon-pci", "balloon0", PciRank::kBalloon, 0, 20), 0, 5)};
  devs[0].element = "interface";
  devs[1].element = "memballoon";
  try {
    AssignPciAddresses(f.ctx, &devs);
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    const Diagnostic& d = e.diagnostics().at(0);
    EXPECT_EQ(d.line, 20);
    EXPECT_EQ(d.element, "memballoon");
    EXPECT_NE(d.message.find("0000:00:05.0"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("<interface> (d.xml:12)"), std::string::npos) << d.message;
  }
}

TEST(AssignPciAddresses, ChipsetSlotsAreTaken) {
  Fixture f(true);
  std::vector<PlannedDevice> devs = {At(Dev("e1000", "net0", PciRank::kNet, 0, 9), 0, 0x1f, 0)};
  devs[0].element = "interface";
  try {
    AssignPciAddresses(f.ctx, &devs);
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().at(0).line, 9);
    EXPECT_NE(e.diagnostics().at(0).message.find("ICH9 LPC/ISA bridge"), std::string::npos)
        << e.diagnostics().at(0).message;
  }
}

TEST(AssignPciAddresses, RootPortHasOnlySlotZero) {
  Fixture f(true);
  std::vector<PlannedDevice> devs = {Dev("pcie-root-port", "pci.1", PciRank::kPciController, 1),
                                     At(Dev("virtio-net-pci", "net0", PciRank::kNet, 0, 30), 1, 3)};
  try {
    AssignPciAddresses(f.ctx, &devs);
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().at(0).line, 30);
    EXPECT_NE(e.diagnostics().at(0).message.find("slot must be from 0 to 0"), std::string::npos)
        << e.diagnostics().at(0).message;
  }
}

}  // namespace
}  // namespace qlaunch::qemu
