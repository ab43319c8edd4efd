// qlaunch domblklist: a running domain's disks, as `virsh domblklist` lists them.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/virsh_table.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/device_lists.h"
#include "launcher/lifecycle/observe/domain_xml.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name;
  bool details = false;
  bool json = false;
};

int Run(const Options& o) {
  StateDir state;
  const std::vector<BlockRow> disks = BlockDevices(LiveDomainXmlOf(state, o.name, Verb::kDomblklist), o.name);
  if (o.json) {
    std::printf("%s\n", ToJson(disks).dump().c_str());
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const BlockRow& d : disks)
    rows.push_back(o.details ? std::vector<std::string>{d.type, d.device, d.target, d.source}
                             : std::vector<std::string>{d.target, d.source});
  const std::string table = o.details ? VirshTable({"Type", "Device", "Target", "Source"}, rows)
                                      : VirshTable({"Target", "Source"}, rows);
  std::fputs(table.c_str(), stdout);
  return 0;
}

}  // namespace

void AddDomblklistCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "domblklist",
      "List a running domain's disks as `virsh domblklist` does: Target and Source (\"-\" for an empty\n"
      "cdrom); --details adds Type (file, block) and Device (disk, cdrom).\n"
      "Example: qlaunch domblklist --details vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_flag("--details", o->details, "also the Type and Device columns");
  sub->add_flag("--json", o->json, "print [{\"type\",\"device\",\"target\",\"source\"}] (source null for none)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
