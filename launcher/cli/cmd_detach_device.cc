// qlaunch detach-device: a device detached from a running domain (launcher/lifecycle/hotplug.h).
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
    throw std::runtime_error(std::string("detach-device: ") + (o.config ? "--config" : "--persistent") +
                             " changes a stored definition, and qlaunch keeps none (a domain is its XML file); "
                             "edit the XML for the next start and use --live (the default) for the running domain");
  StateDir state;
  HotplugOptions opts;
  opts.detach_wait = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1000));
  const HotplugResult r = DetachDevice(state, o.name, o.file, opts);
  if (o.json) {
    std::printf("%s\n", ToJson(r).dump().c_str());
  } else if (!r.released) {
    std::printf("Device detach request sent successfully; the guest has not released %s yet (after %g s)\n",
                r.id.c_str(), o.timeout);
  } else {
    std::printf("Device detached successfully\n\n");
  }
  return r.released ? 0 : 3;
}

}  // namespace

void AddDetachDeviceCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "detach-device",
      "Detach a device from a running domain, live, as `virsh detach-device --live` does. FILE names the\n"
      "device as libvirt matches it: a <disk> by its target dev, an <interface> by its MAC, an <rng> by\n"
      "its backend, a <channel> by its target name. qlaunch asks QEMU to remove it and waits up to\n"
      "--timeout seconds for the guest to release it (DEVICE_DELETED); then it removes the backends,\n"
      "the tap and the socket, and gives the image back to its owner. A device the guest has not\n"
      "released in time stays attached (exit status 3); the next attach-device or detach-device\n"
      "finishes the removal once QEMU reports it gone.\n"
      "Example: qlaunch detach-device vm1 disk.xml");
  sub->add_option("NAME", o->name, "the domain's <name>")->required();
  sub->add_option("FILE", o->file, "the device XML")->required();
  sub->add_flag("--live", o->live, "act on the running domain (the default, and all qlaunch can do)");
  sub->add_flag("--current", o->current, "the same as --live for a running domain");
  sub->add_flag("--config", o->config, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--persistent", o->persistent, "refused: qlaunch keeps no stored definition");
  sub->add_option("--timeout", o->timeout, "seconds to wait for the guest to release the device (default 10)")
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_flag("--json", o->json, "print {\"element\",\"alias\",\"ms\"} (and \"released\": false when the guest has not let go)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
