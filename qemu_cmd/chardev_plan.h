// The character device family: <serial>, <console>, <channel> as libvirt 9.0 renders them
// (qemu_cmd/chardev_plan.cc): serials first, then channels, then consoles, each a -chardev and
// its -device (isa-serial / pci-serial, virtserialport, virtconsole). A <console> with target
// serial is the first serial port (libvirt makes it serial0 when there is no <serial>).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

// A UNIX socket QEMU serves (<source mode='bind'>): `qlaunch start` makes it and hands QEMU
// the listening fd (DeviceResources::chardev_fds); without one the argv names the path.
struct ChardevListenSocket {
  size_t index = 0;        // in def.devices.chardevs
  std::string path;
  bool in_channel_dir = false;  // a unix channel without a path: qlaunch's own socket
};

// The channel dir the planner uses when the launcher gave none (domxml-to-native): "channel"
// beside the QMP socket, where `qlaunch start` puts it.
std::string ChannelDir(const PlanOptions& opts);

// Every bind-mode UNIX chardev, in document order. A channel without a path gets
// `channel_dir`/<target name> (libvirt's vioser-CC-BB-PP.sock for a channel without a name).
// Throws DiagnosticError for a target name that cannot be a file name.
std::vector<ChardevListenSocket> ChardevListenSockets(const domain::DomainDef& def, const std::string& channel_dir);

}  // namespace qlaunch::qemu
