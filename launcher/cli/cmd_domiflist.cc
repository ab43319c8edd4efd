// qlaunch domiflist: a running domain's network interfaces, as `virsh domiflist` lists them.
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
  bool json = false;
};

int Run(const Options& o) {
  StateDir state;
  const std::vector<InterfaceRow> nics = Interfaces(LiveDomainXmlOf(state, o.name, Verb::kDomiflist), o.name);
  if (o.json) {
    std::printf("%s\n", ToJson(nics).dump().c_str());
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const InterfaceRow& n : nics) rows.push_back({n.interface, n.type, n.source, n.model, n.mac});
  std::fputs(VirshTable({"Interface", "Type", "Source", "Model", "MAC"}, rows).c_str(), stdout);
  return 0;
}

}  // namespace

void AddDomiflistCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "domiflist",
      "List a running domain's network interfaces as `virsh domiflist` does: Interface (the tap qlaunch\n"
      "made, \"-\" for user networking), Type, Source (the bridge), Model and MAC.\n"
      "Example: qlaunch domiflist vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_flag("--json", o->json,
                "print [{\"interface\",\"type\",\"source\",\"model\",\"mac\"}] (null where virsh prints \"-\")");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
