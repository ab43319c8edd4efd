// The controller family: <controller> and the controllers libvirt 9.0 adds implicitly
// (qemu_cmd/controller_plan.cc). PCI controllers the PCI address assignment needs are added
// by AssignPciAddresses (qemu_cmd/pci_address.h), not here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

// A controller as libvirt keeps it after its post-parse: index and model decided, the
// implicit ones added (default USB, the q35 SATA, the disks' SCSI/SATA controllers,
// virtio-serial for virtio consoles and channels). In libvirt's list order, which is the
// order of PCI address assignment.
struct EffectiveController {
  domain::Controller def;  // index set; model set (usb, scsi); line 0 for implicit ones
  bool implicit = false;
};
std::vector<EffectiveController> EffectiveControllers(const domain::DomainDef& def, bool q35);

}  // namespace qlaunch::qemu
