// PlanControllers: the explicit controllers and the ones libvirt 9.0 adds, as domxml-to-native
// renders them (bus/addr come from AssignPciAddresses, tested in pci_address_test.cc).
#include "qemu_cmd/controller_plan.h"

#include <gtest/gtest.h>

#include "common/diagnostic.h"
#include "qemu_cmd/pci_address.h"

namespace qlaunch::qemu {
namespace {

domain::DomainDef Def(const std::string& machine) {
  domain::DomainDef def;
  def.file = "c.xml";
  def.os.machine = machine;
  return def;
}

domain::Controller Ctl(std::string type, std::string model = "", std::optional<unsigned> index = std::nullopt) {
  domain::Controller c;
  c.type = std::move(type);
  c.model = std::move(model);
  c.index = index;
  c.line = 7;
  return c;
}

std::vector<std::string> Argv(const domain::DomainDef& def, bool assign = false) {
  DeviceContext ctx;
  ctx.def = &def;
  ctx.q35 = IsQ35(def.os.machine);
  std::vector<PlannedDevice> out;
  PlanControllers(ctx, &out);
  if (assign) AssignPciAddresses(ctx, &out);
  return RenderDevicePlan(out);
}

TEST(PlanControllers, DefaultUsbPerMachine) {
  EXPECT_EQ(Argv(Def("pc"), true), (std::vector<std::string>{"-device", "piix3-usb-uhci,id=usb,bus=pci.0,addr=0x1.0x2"}));
  auto q35 = Argv(Def("pc-q35-7.2"), true);
  // The xhci on a root port, and the spare root port; without a video they start at slot 1
  // (virsh domxml-to-native: port 8, chassis 1, addr 0x1).
  ASSERT_EQ(q35.size(), 6u);
  EXPECT_EQ(q35[1], "pcie-root-port,id=pci.1,port=0x8,chassis=1,bus=pcie.0,addr=0x1,multifunction=on");
  EXPECT_EQ(q35[3], "pcie-root-port,id=pci.2,port=0x9,chassis=2,bus=pcie.0,addr=0x1.0x1");
  EXPECT_EQ(q35[5], "qemu-xhci,id=usb,bus=pci.1,addr=0x0");
  auto none = Def("pc");
  none.devices.controllers = {Ctl("usb", "none")};
  EXPECT_TRUE(Argv(none).empty());
}

TEST(PlanControllers, ImpliedByDisksAndChardevs) {
  auto def = Def("pc");
  domain::Disk scsi, sata, ide;
  scsi.target_bus = "scsi";
  sata.target_bus = "sata";
  ide.target_bus = "ide";
  def.devices.disks = {scsi, sata, ide};
  domain::CharDev console;
  console.kind = "console";
  console.target_type = "virtio";
  def.devices.chardevs = {console};
  def.devices.controllers = {Ctl("virtio-serial", "", 0)};
  def.devices.controllers[0].ports = 4;
  EXPECT_EQ(Argv(def), (std::vector<std::string>{"-device", "piix3-usb-uhci,id=usb", "-device", "lsi,id=scsi0",
                                                 "-device", "ahci,id=sata0", "-device",
                                                 "virtio-serial-pci,id=virtio-serial0,max_ports=4"}));
  // q35: the SATA controller is the built-in ICH9 AHCI.
  def.os.machine = "q35";
  def.devices.disks = {sata};
  def.devices.controllers.clear();
  EXPECT_EQ(Argv(def), (std::vector<std::string>{"-device", "qemu-xhci,id=usb", "-device",
                                                 "virtio-serial-pci,id=virtio-serial0"}));
}

TEST(PlanControllers, UsbCompanionsAndXhciPorts) {
  auto def = Def("pc");
  auto uhci = Ctl("usb", "ich9-uhci1", 0);
  uhci.master_startport = 0;
  auto xhci = Ctl("usb", "qemu-xhci", 1);
  xhci.ports = 8;
  def.devices.controllers = {Ctl("usb", "ich9-ehci1", 0), uhci, xhci, Ctl("scsi", "virtio-scsi", 0)};
  EXPECT_EQ(Argv(def, true),
            (std::vector<std::string>{"-device", "ich9-usb-ehci1,id=usb,bus=pci.0,addr=0x2.0x7", "-device",
                                      "ich9-usb-uhci1,masterbus=usb.0,firstport=0,bus=pci.0,addr=0x2,multifunction=on",
                                      "-device", "qemu-xhci,id=usb1,p2=8,p3=8,bus=pci.0,addr=0x3", "-device",
                                      "virtio-scsi-pci,id=scsi0,bus=pci.0,addr=0x4"}));
}

// virt-install's --controller usb2 writes the EHCI and its companions without an index: the
// companions belong to the controller before them (as libvirt: one slot, 0x1d on q35).
TEST(PlanControllers, CompanionsWithoutIndexJoinTheControllerBeforeThem) {
  auto def = Def("q35");
  std::vector<domain::Controller> usb = {Ctl("usb", "ich9-ehci1")};
  for (unsigned i = 1; i <= 3; ++i) {
    usb.push_back(Ctl("usb", "ich9-uhci" + std::to_string(i)));
    usb.back().master_startport = 2 * (i - 1);
  }
  def.devices.controllers = usb;
  EXPECT_EQ(Argv(def, true),
            (std::vector<std::string>{"-device", "ich9-usb-ehci1,id=usb,bus=pcie.0,addr=0x1d.0x7", "-device",
                                      "ich9-usb-uhci1,masterbus=usb.0,firstport=0,bus=pcie.0,addr=0x1d,multifunction=on",
                                      "-device", "ich9-usb-uhci2,masterbus=usb.0,firstport=2,bus=pcie.0,addr=0x1d.0x1",
                                      "-device", "ich9-usb-uhci3,masterbus=usb.0,firstport=4,bus=pcie.0,addr=0x1d.0x2"}));
}

TEST(PlanControllers, Errors) {
  struct Case {
    std::string machine;
    domain::Controller c;
    std::string message;
  };
  for (const Case& c : {Case{"q35", Ctl("ide", "", 0), "IDE controllers are unsupported on q35"},
                        Case{"pc", Ctl("pci", "pcie-root-port", 1), "needs a q35 machine"},
                        Case{"pc", Ctl("pci", "pcie-root", 0), "does not fit machine 'pc'"}}) {
    auto def = Def(c.machine);
    def.devices.controllers = {c.c};
    try {
      Argv(def);
      ADD_FAILURE() << c.message;
    } catch (const DiagnosticError& e) {
      EXPECT_NE(e.diagnostics().at(0).message.find(c.message), std::string::npos) << e.diagnostics().at(0).message;
      EXPECT_EQ(e.diagnostics().at(0).line, 7);
    }
  }
  auto def = Def("pc");
  def.devices.controllers = {Ctl("usb", "none")};
  domain::Input tablet;
  tablet.bus = "usb";
  tablet.line = 12;
  def.devices.inputs = {tablet};
  EXPECT_THROW(Argv(def), DiagnosticError);
}

}  // namespace
}  // namespace qlaunch::qemu
