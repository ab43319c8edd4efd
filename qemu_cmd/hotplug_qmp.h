// The QMP commands that give a running QEMU a planned device, and take it away again: each
// backend option of the device's plan (-blockdev, -netdev, -object, -chardev) as the command that
// makes the same backend at run time (blockdev-add, netdev_add, object-add, chardev-add) with
// the command that removes it, and the -device as device_add. Pure; the hot-plug planner
// (qemu_cmd/hotplug_plan.h) orders them as libvirt 9.0 does.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

struct QmpCall {
  std::string execute;       // "" = nothing to do
  nlohmann::json arguments;  // an object, or null for none
  // When set: the host fd of the device (a tap, a listening socket) goes along with this command
  // (SCM_RIGHTS), which is then `getfd` naming it so.
  bool pass_fd = false;
};

struct BackendCalls {
  QmpCall add, remove;
};

// "tap,fd=3,id=hostnet1" -> {{"", "tap"}, {"fd", "3"}, {"id", "hostnet1"}}: QEMU's key=value
// syntax (",," is a comma inside a value); a part without '=' has the key "".
std::vector<std::pair<std::string, std::string>> SplitKeyValues(std::string_view option);

// The QMP form of one backend option. `fd_name` replaces the fd= number of a -netdev tap or
// -chardev socket (the fd is passed first with getfd under that name). Throws
// std::invalid_argument for an option qlaunch cannot create at run time.
BackendCalls BackendCallsOf(const DeviceArg& arg, const std::string& fd_name);

// device_add of the planned -device: driver, id, the properties and the PCI bus/addr, every value
// a string as on the command line; and its device_del.
QmpCall DeviceAddOf(const PlannedDevice& d);
QmpCall DeviceDelOf(const std::string& id);

}  // namespace qlaunch::qemu
