// A running domain's live XML (`qlaunch dumpxml`) read against what its QEMU itself reports,
// not against the planner that wrote both the XML and the command line: where QEMU put every
// PCI device (QEMU's device tree: the bridge owning its parent_bus, its devfn; q35's bus numbers,
// which the guest's firmware assigns, play no part: <address bus='N'> must name the controller
// of index N whose alias is the bridge QEMU has the device behind, or the root), that every
// device QEMU has on PCI with an id is listed (and the root bus's id-less SATA controller:
// query-pci), the root ports' chassis/port and the controllers' QEMU types (qom-get,
// qom-list), virtio-serial ports (parent_bus, nr), disks' media
// (query-block), MACs, chardev paths (query-chardev), the VNC port (query-vnc), the memory
// totals (query-memory-size-summary, query-memdev, query-balloon), NUMA cells (`info numa`),
// DIMMs (query-memory-devices) and the vCPUs (query-cpus-fast).
#pragma once

#include <string>
#include <vector>

#include "support/device_facts.h"

namespace qlaunch::testing {

struct LiveXmlVsQemu {
  std::vector<std::string> checked;   // what was compared ("pci net0", "disk vda", "memory", ...)
  std::vector<std::string> mismatch;  // each disagreement, saying what the XML and QEMU have
};

LiveXmlVsQemu CompareLiveXmlWithQemu(const std::string& live_xml, const Monitor& ask);

}  // namespace qlaunch::testing
