// qlaunch attach-device: a device attached to a running domain (launcher/lifecycle/hotplug.h).
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/hotplug.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name, file;
  bool live = false, current = false, config = false, persistent = false, json = false;
  double timeout = 10;
};

int Run(const Options& o) {
  if (o.config || o.persistent)
    throw std::runtime_error(std::string("attach-device: ") + (o.config ? "--config" : "--persistent") +
                             " changes a stored definition, and qlaunch keeps none (a domain is its XML file); "
                             "edit the XML for the next start and use --live (the default) for the running domain");
  StateDir state;
  HotplugOptions opts;
  opts.detach_wait = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1000));
  const HotplugResult r = AttachDevice(state, o.name, o.file, opts);
  if (o.json) {
    std::printf("%s\n", ToJson(r).dump().c_str());
  } else if (!r.released) {
    std::printf("Device detach request sent successfully; the guest has not released %s yet (after %g s)\n",
                r.id.c_str(), o.timeout);
  } else {
    std::printf("Device attached successfully\n\n");
  }
  return r.released ? 0 : 3;
}

}  // namespace

void AddAttachDeviceCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "attach-device",
      "Attach a device to a running domain, live, as `virsh attach-device --live` does. FILE holds one\n"
      "<disk> (file or block; virtio, sata, scsi, ide or usb; disk or cdrom), <interface> (user, ethernet\n"
      "or bridge: qlaunch makes the tap and hands it to QEMU), <rng>, <channel> or a scsi <controller>.\n"
      "It is planned as at start, with the ids, PCI addresses and QMP objects libvirt 9.0 uses\n"
      "(blockdev-add, netdev_add, chardev-add, object-add, device_add), and recorded: dumpxml,\n"
      "domblklist and domiflist show it.\n"
      "A failure leaves the domain as it was. qlaunch keeps no stored definition, so --config and\n"
      "--persistent are refused.\n"
      "Example: qlaunch attach-device vm1 disk.xml");
  sub->add_option("NAME", o->name, "the domain's <name>")->required();
  sub->add_option("FILE", o->file, "the device XML")->required();
  sub->add_flag("--live", o->live, "act on the running domain (the default, and all qlaunch can do)");
  sub->add_flag("--current", o->current, "the same as --live for a running domain");
  sub->add_flag("--config", o->config, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--persistent", o->persistent, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--json", o->json, "print {\"element\",\"alias\",\"pci\",\"tap\",\"ms\"}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
