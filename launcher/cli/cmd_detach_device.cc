// qlaunch detach-device: a device detached from a running domain (launcher/lifecycle/change/hotplug.h).
#include <memory>

#include <CLI/CLI.hpp>

#include "launcher/cli/command.h"
#include "launcher/cli/device_verb.h"

namespace qlaunch::launcher {

void AddDetachDeviceCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<DeviceVerbOptions>();
  CLI::App* sub = app.add_subcommand(
      "detach-device",
      "Detach a device from a running domain, live, as `virsh detach-device --live` does. FILE names the\n"
      "device as libvirt matches it: a <disk> by its target dev, an <interface> by its MAC, an <rng> by\n"
      "its backend, a <channel> by its target name, a scsi <controller> by its index, a <memory> by its\n"
      "model, size, guest node (and a DIMM's slot). qlaunch asks QEMU to remove it (QEMU 7.2 cannot\n"
      "remove a virtio-mem device: shrink it to 0 with update-memory-device) and waits up to\n"
      "--timeout seconds for the guest to release it (DEVICE_DELETED); then it removes the backends,\n"
      "the tap and the socket, and gives the image back to its owner. A device the guest has not\n"
      "released in time stays attached (exit status 3); the next attach-device or detach-device\n"
      "finishes the removal once QEMU reports it gone.\n"
      "Example: qlaunch detach-device vm1 disk.xml");
  AddDeviceVerbOptions(sub, o.get());
  sub->add_option("--timeout", o->timeout, "seconds to wait for the guest to release the device (default 10)")
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_flag("--json", o->json, "print {\"element\",\"alias\",\"ms\"} (and \"released\": false when the guest has not let go)");
  sub->callback([o, action] { *action = [o] { return RunDeviceVerb(true, *o); }; });
}

}  // namespace qlaunch::launcher
