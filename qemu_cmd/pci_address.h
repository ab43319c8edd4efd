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

// Hot-plug: the address libvirt gives a device attached to a running domain. Its XML address
// when that is free, else the first free hotpluggable slot in bus order (a free pcie-root-port
// on q35, a free slot of pci.0 or of a pci-bridge on pc), with the bus set as it is: nothing can
// be added to a running machine. `running` are the domain's devices as they run (their `slot`s
// set; PCI controllers by their driver and id "pci.N"). Throws DiagnosticError naming the new
// device (ctx.def->file, its line) when its address is taken or no slot is free.
void AssignHotplugPciAddress(const DeviceContext& ctx, const std::vector<PlannedDevice>& running,
                             PlannedDevice* device);

// "1f" for 31 (lower case, no prefix).
std::string ToHex(unsigned v);

}  // namespace qlaunch::qemu
