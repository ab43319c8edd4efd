#include "launcher/cli/device_verb.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/hotplug.h"

namespace qlaunch::launcher {

void AddDeviceVerbOptions(CLI::App* sub, DeviceVerbOptions* o) {
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  SetKind(sub->add_option("FILE", o->file, "the device XML"), ArgKind::kInputFile)->required();
  sub->add_flag("--live", o->live, "act on the running domain (the default, and all qlaunch can do)");
  sub->add_flag("--current", o->current, "the same as --live for a running domain");
  sub->add_flag("--config", o->config, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--persistent", o->persistent, "refused: qlaunch keeps no stored definition");
}

int RunDeviceVerb(bool detach, const DeviceVerbOptions& o) {
  const char* verb = detach ? "detach-device" : "attach-device";
  if (o.config || o.persistent)
    throw std::runtime_error(std::string(verb) + ": " + (o.config ? "--config" : "--persistent") +
                             " changes a stored definition, and qlaunch keeps none (a domain is its XML file); "
                             "edit the XML for the next start and use --live (the default) for the running domain");
  StateDir state;
  HotplugOptions opts;
  opts.detach_wait = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1000));
  const HotplugResult r = detach ? DetachDevice(state, o.name, o.file, opts) : AttachDevice(state, o.name, o.file, opts);
  if (o.json) {
    std::printf("%s\n", ToJson(r).dump().c_str());
  } else if (!r.released) {
    std::printf("Device detach request sent successfully; the guest has not released %s yet (after %g s)\n",
                r.id.c_str(), o.timeout);
  } else {
    std::printf("%s\n\n", detach ? "Device detached successfully" : "Device attached successfully");
  }
  return r.released ? 0 : 3;
}

}  // namespace qlaunch::launcher
