// The machine around the devices: <features>, <clock>, <pm>, <cpu> features and check,
// <sysinfo>/<os><smbios>, and UEFI firmware (<os firmware='efi'>, <loader>, <nvram>), rendered
// as libvirt 9.0 does (qemu_cmd/machine_plan.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

struct MachineArgs {
  std::vector<DeviceArg> before_machine;  // e.g. the pflash -blockdevs
  std::vector<std::pair<std::string, std::string>> machine_props;  // appended to -machine
  std::vector<std::string> cpu_suffix;    // appended to -cpu as ",+x" / ",x=on" pieces
  std::vector<DeviceArg> after_uuid;      // -smbios
  std::vector<DeviceArg> after_monitor;   // -rtc, -global, -no-hpet, ...
};

MachineArgs PlanMachine(const DeviceContext& ctx);

}  // namespace qlaunch::qemu
