// qlaunch change-media: eject, insert or change a running domain's cdrom, as `virsh change-media
// --live` does.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/media_change.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  ChangeMediaOptions change;
  bool eject = false, insert = false, update = false, live = false, config = false, json = false;
};

int Run(Options o) {
  if (o.config)
    throw std::runtime_error("--config/--persistent: qlaunch keeps no stored definition of a domain to change; "
                             "change-media acts on the running domain only (--live)");
  o.change.action = o.eject ? MediaAction::kEject : o.insert ? MediaAction::kInsert : MediaAction::kUpdate;
  StateDir state;
  const ChangeMediaResult r = ChangeMedia(state, o.change);
  if (o.json) {
    auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
    nlohmann::json out = {{"target", r.target},           {"device", r.device_id},
                          {"old_source", or_null(r.old_source)}, {"new_source", or_null(r.new_source)},
                          {"old_node", or_null(r.old_node)},     {"new_node", or_null(r.new_node)},
                          {"qmp", r.commands}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("Successfully %s media.\n", o.eject ? "ejected" : o.insert ? "inserted" : "updated");
  return 0;
}

}  // namespace

void AddChangeMediaCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "change-media",
      "Eject, insert or change the medium of a running domain's cdrom, as `virsh change-media --live`\n"
      "does under libvirt 9.0 (the same QMP: blockdev-add of the new medium's nodes, named as libvirt\n"
      "names them, blockdev-open-tray, -remove-medium, blockdev-del of the old nodes, -insert-medium,\n"
      "-close-tray). The new file is given to QEMU's user, the old one back to its owner; dumpxml and\n"
      "domblklist show the new source. Without --eject/--insert/--update: --update.\n"
      "Example: qlaunch change-media vm1 sda /srv/iso/debian-12.iso\n"
      "         qlaunch change-media vm1 sda --eject");
  SetKind(sub->add_option("NAME", o->change.name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("TARGET", o->change.target, "the drive: its <target dev> (sda, hdc) or its current source path")
      ->required();
  SetKind(sub->add_option("FILE", o->change.source, "the new medium (an image file or a block device)"),
          ArgKind::kPath);
  CLI::Option* eject = sub->add_flag("--eject", o->eject, "remove the medium (the tray ends closed and empty)");
  CLI::Option* insert = sub->add_flag("--insert", o->insert, "insert FILE into an empty drive");
  CLI::Option* update = sub->add_flag("--update", o->update, "insert FILE, replacing the medium if there is one");
  eject->excludes(insert)->excludes(update);
  insert->excludes(update);
  sub->add_flag("--force", o->change.force, "open the tray even when the guest has locked it");
  sub->add_flag("--live", o->live, "act on the running domain (what qlaunch always does)");
  sub->add_flag("--config,--persistent", o->config, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--json", o->json,
                "print {\"target\",\"device\",\"old_source\",\"new_source\",\"old_node\",\"new_node\",\"qmp\": the "
                "commands sent}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
