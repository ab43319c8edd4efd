// Which QEMU device types plug into PCI how: PCI Express, conventional PCI, the PCI controllers,
// and the ICH9 USB2 controllers that libvirt puts on fixed functions of one slot. The table
// AssignPciAddresses (qemu_cmd/pci_address.h) places devices by; pure.
#pragma once

#include <string>

namespace qlaunch::qemu {

// How a device plugs into PCI (libvirt's virDomainPCIConnectFlags, reduced to what x86 needs).
enum class PciKind {
  kConventional,  // e1000, rtl8139, VGA, cirrus-vga, qxl-vga, ich9-intel-hda, AC97, i6300esb, lsi, ahci, uhci/ehci
  kExpress,       // qemu-xhci, nec-usb-xhci, e1000e, bochs-display: a pcie-root-port on q35
  kVirtio,        // virtio-*-pci, virtio-vga: PCI Express on q35 (QEMU 5.2 and 7.2 have transitional virtio)
  kRootPort,      // pcie-root-port, ioh3420
  kPcieToPciBridge,
  kPciBridge,
};

// The kind of a QEMU device type; unknown virtio-* types are virtio, other unknown types conventional.
PciKind PciKindOf(const std::string& driver);

// The function libvirt gives an ICH9 USB2 controller in its slot (ehci1: 7, uhci1..3: 0..2);
// -1 for every other driver.
int Usb2Function(const std::string& driver);

}  // namespace qlaunch::qemu
