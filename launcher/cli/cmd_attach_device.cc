// qlaunch attach-device: a device attached to a running domain (launcher/lifecycle/change/hotplug.h).
#include <memory>

#include <CLI/CLI.hpp>

#include "launcher/cli/command.h"
#include "launcher/cli/device_verb.h"

namespace qlaunch::launcher {

void AddAttachDeviceCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<DeviceVerbOptions>();
  CLI::App* sub = app.add_subcommand(
      "attach-device",
      "Attach a device to a running domain, live, as `virsh attach-device --live` does. FILE holds one\n"
      "<disk> (file or block; virtio, sata, scsi, ide or usb; disk or cdrom), <interface> (user, ethernet\n"
      "or bridge: qlaunch makes the tap and hands it to QEMU), <rng>, <channel>, a scsi <controller>, or a\n"
      "<memory model='dimm'> (on shared huge pages qlaunch fills it before QEMU sees it; `--json` tells\n"
      "who filled it, how long it took and on which CPUs) or <memory model='virtio-mem'> (on a spare PCI\n"
      "slot; grow it with update-memory-device).\n"
      "It is planned as at start, with the ids, PCI addresses and QMP objects libvirt 9.0 uses\n"
      "(blockdev-add, netdev_add, chardev-add, object-add, device_add), and recorded: dumpxml,\n"
      "domblklist and domiflist show it.\n"
      "A failure leaves the domain as it was. qlaunch keeps no stored definition, so --config and\n"
      "--persistent are refused.\n"
      "Example: qlaunch attach-device vm1 disk.xml");
  AddDeviceVerbOptions(sub, o.get());
  sub->add_flag("--json", o->json, "print {\"element\",\"alias\",\"pci\",\"tap\",\"ms\"}");
  sub->callback([o, action] { *action = [o] { return RunDeviceVerb(false, *o); }; });
}

}  // namespace qlaunch::launcher
