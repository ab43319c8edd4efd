// qlaunch update-memory-device: a running domain's virtio-mem device asked to plug or unplug
// memory, as `virsh update-memory-device --live --requested-size` does.
#include <cstdio>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/scaled_size.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/memory_resize.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  UpdateMemoryOptions update;
  std::string requested;
  std::optional<unsigned> node;
  bool live = false, current = false, config = false, print_xml = false, json = false;
};

int Run(Options o) {
  if (o.config)
    throw std::runtime_error("--config: qlaunch keeps no stored definition of a domain to change; "
                             "update-memory-device acts on the running domain only (--live)");
  if (o.print_xml) throw std::runtime_error("--print-xml: not supported; `qlaunch dumpxml NAME` shows the device");
  if (o.requested.empty())
    throw std::runtime_error("update-memory-device: nothing to change: give --requested-size (virtio-mem)");
  o.update.requested_bytes = VirshScaledSize(o.requested, "update-memory-device");
  o.update.which.node = o.node;
  StateDir state;
  const UpdateMemoryResult r = UpdateMemoryDevice(state, o.update);
  if (o.json)
    std::printf("%s\n", nlohmann::json({{"alias", r.alias},
                                        {"size_bytes", r.size_bytes},
                                        {"block_bytes", r.block_bytes},
                                        {"requested_bytes_before", r.old_requested},
                                        {"requested_bytes", r.new_requested},
                                        {"plugged_bytes", r.plugged_bytes},
                                        {"qmp", r.qmp}})
                            .dump()
                            .c_str());
  return 0;
}

}  // namespace

void AddUpdateMemoryDeviceCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "update-memory-device",
      "Ask a running domain's virtio-mem device to plug or unplug memory, as `virsh\n"
      "update-memory-device --live --requested-size` does under libvirt 9.0 (QMP qom-set of the\n"
      "device's requested-size). The guest's virtio_mem driver then plugs or unplugs blocks on its\n"
      "own; `dominfo` shows what is plugged. SIZE is KiB unless it has a unit, a whole number of the\n"
      "device's blocks and at most its size. Growth on huge pages is checked against the host's pools\n"
      "first (nothing is sent when they are short). The device is chosen by --alias (virtiomem<N>,\n"
      "as `dumpxml` shows it) or --node, or is the domain's only virtio-mem device.\n"
      "Example: qlaunch update-memory-device vm1 --alias virtiomem0 --requested-size 4G");
  SetKind(sub->add_option("NAME", o->update.name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("--alias", o->update.which.alias, "the device's alias (virtiomem0, ...)");
  sub->add_option("--node", o->node, "the device's guest NUMA node (<target><node>)");
  sub->add_option("--requested-size", o->requested, "the memory the device should plug: KiB, or with a unit (M, G, ...)");
  sub->add_flag("--live", o->live, "act on the running domain (what qlaunch always does)");
  sub->add_flag("--current", o->current, "the same as --live for a running domain");
  sub->add_flag("--config", o->config, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--print-xml", o->print_xml, "refused: dumpxml shows the device");
  sub->add_flag("--json", o->json,
                "print {\"alias\",\"size_bytes\",\"block_bytes\",\"requested_bytes_before\",\"requested_bytes\","
                "\"plugged_bytes\",\"qmp\": the command sent}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
