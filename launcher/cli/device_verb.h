// What attach-device and detach-device share (cmd_attach_device.cc, cmd_detach_device.cc): the
// options virsh gives them (--live, --current, --config, --persistent) with --json, and running
// one through launcher/lifecycle/change/hotplug.h, printing what virsh prints.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace qlaunch::launcher {

struct DeviceVerbOptions {
  std::string name, file;
  bool live = false, current = false, config = false, persistent = false, json = false;
  double timeout = 10;  // detach-device --timeout
};

// NAME, FILE, --live, --current, --config, --persistent.
void AddDeviceVerbOptions(CLI::App* sub, DeviceVerbOptions* o);

// `detach` false: attach-device. Exit status 0, or 3 when the guest has not released a detached
// device yet.
int RunDeviceVerb(bool detach, const DeviceVerbOptions& o);

}  // namespace qlaunch::launcher
