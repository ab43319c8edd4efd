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
#include "qemu_cmd/pci_kind.h"

namespace qlaunch::qemu {

// Fills `slot` of every pci device; may insert PCI controllers (family "controller",
// rank kPciController) it had to add. Throws DiagnosticError on a clash or a full bus.
void AssignPciAddresses(const DeviceContext& ctx, std::vector<PlannedDevice>* devices);

// "1f" for 31 (lower case, no prefix).
std::string ToHex(unsigned v);

}  // namespace qlaunch::qemu
