// PCI addresses as libvirt 9.0 assigns them, in one pure function: on q35 every PCIe device
// on its own pcie-root-port (added when the XML has too few), conventional PCI devices behind
// a pcie-to-pci-bridge, integrated devices on pcie.0; on pc everything on pci.0 from slot 2
// (slot 1 is the PIIX3). Addresses the XML gives are kept; two devices on one address is an
// error naming both elements.
//
// The algorithm is libvirt's (qemuDomainAssignPCIAddresses): a first "dry run" places every
// device and grows the bus set where there is no room (a pcie-root-port per PCIe device, a
// pcie-root-port + pcie-to-pci-bridge for the first conventional device on q35, pci-bridges
// on pc), plus one spare root port for hotplug on a q35 whose XML has no PCI controllers;
// the controllers that pass added become real, and a second pass assigns the final
// addresses with the bus set fixed.
#pragma once

#include <string>
#include <vector>

#include "qemu_cmd/device_plan.h"

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

// Fills `slot` of every pci device; may insert PCI controllers (family "controller",
// rank kPciController) it had to add. Throws DiagnosticError on a clash or a full bus.
void AssignPciAddresses(const DeviceContext& ctx, std::vector<PlannedDevice>* devices);

// "1f" for 31 (lower case, no prefix).
std::string ToHex(unsigned v);

}  // namespace qlaunch::qemu
