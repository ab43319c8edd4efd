// <controller>: usb, scsi, virtio-serial, sata, ide, pci (parsed by domain/parse_controller.cc).
#pragma once

#include <optional>
#include <string>

#include "domain/device_address.h"

namespace qlaunch::domain {

struct Controller {
  std::string type;   // usb | scsi | virtio-serial | sata | ide | pci
  std::optional<unsigned> index;  // unset: the next free index of its type (libvirt's rule)
  std::string model;  // usb: ich9-ehci1|ich9-uhci1..3|qemu-xhci|piix3-uhci|nec-xhci|none ("" = default);
                      // scsi: virtio-scsi|lsilogic ("" = libvirt's default, lsilogic on x86);
                      // pci: pci-root|pcie-root|pcie-root-port|pci-bridge|pcie-to-pci-bridge
  std::string model_name;           // pci <model name='pcie-root-port'/>: the QEMU device ("" = default)
  std::optional<unsigned> ports;    // usb ports (qemu-xhci p2/p3), virtio-serial ports
  std::optional<unsigned> vectors;  // virtio-serial
  std::optional<unsigned> chassis, port;  // pci <target chassis port>
  std::optional<unsigned> chassis_nr;     // pci-bridge <target chassisNr>
  std::optional<unsigned> master_startport;  // usb companions: <master startport='0'/>
  DeviceAddress address;
  int line = 0;
};

}  // namespace qlaunch::domain
