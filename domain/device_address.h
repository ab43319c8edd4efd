// <address> of a device, as the XML gives it (libvirt's device address types qlaunch reads).
// Unset fields are the ones libvirt (and qlaunch) choose.
#pragma once

#include <optional>
#include <string>

namespace qlaunch::domain {

struct DeviceAddress {
  std::string type;  // "" (none given) | pci | drive | usb | virtio-serial | isa
  // pci
  std::optional<unsigned> domain, bus, slot, function;
  bool multifunction = false;
  // drive (controller/bus/target/unit) and virtio-serial (controller/bus/port)
  std::optional<unsigned> controller, drive_bus, target, unit, port;
  // usb: bus and port ("1" or "1.2")
  std::string usb_port;
  int line = 0;
};

}  // namespace qlaunch::domain
