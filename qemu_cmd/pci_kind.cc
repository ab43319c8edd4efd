#include "qemu_cmd/pci_kind.h"

#include <map>

namespace qlaunch::qemu {

PciKind PciKindOf(const std::string& driver) {
  static const std::map<std::string, PciKind, std::less<>> kKinds = {
      {"qemu-xhci", PciKind::kExpress},       {"nec-usb-xhci", PciKind::kExpress},
      {"e1000e", PciKind::kExpress},          {"igb", PciKind::kExpress},
      {"bochs-display", PciKind::kExpress},   {"virtio-vga", PciKind::kVirtio},
      {"pcie-root-port", PciKind::kRootPort}, {"ioh3420", PciKind::kRootPort},
      {"pcie-pci-bridge", PciKind::kPcieToPciBridge}, {"pci-bridge", PciKind::kPciBridge},
  };
  if (auto it = kKinds.find(driver); it != kKinds.end()) return it->second;
  // virtio-*-pci; the -transitional variants only work in conventional slots.
  if (driver.starts_with("virtio-") && !driver.ends_with("-transitional")) return PciKind::kVirtio;
  return PciKind::kConventional;
}

int Usb2Function(const std::string& driver) {
  if (driver == "ich9-usb-ehci1") return 7;
  if (driver == "ich9-usb-uhci1") return 0;
  if (driver == "ich9-usb-uhci2") return 1;
  if (driver == "ich9-usb-uhci3") return 2;
  return -1;
}

}  // namespace qlaunch::qemu
