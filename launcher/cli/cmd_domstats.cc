// qlaunch domstats: a running domain's statistics, as `virsh domstats` prints them.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/dom_stats_read.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name;
  bool json = false;
};

int Run(const Options& o) {
  StateDir state;
  const std::vector<StatField> fields = ReadDomStats(state, o.name);
  if (o.json)
    std::printf("%s\n", DomStatsJson(fields).dump().c_str());
  else
    std::fputs(DomStatsText(o.name, fields).c_str(), stdout);
  return 0;
}

}  // namespace

void AddDomstatsCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "domstats",
      "Show a running domain's statistics as `virsh domstats` names them, for the groups state,\n"
      "balloon, vcpu, net and block: state.state, balloon.current, vcpu.N.time, net.N.rx.bytes (from\n"
      "the tap; none for user networking, as libvirt), block.N.rd.reqs, block.N.capacity, ...\n"
      "Example: qlaunch domstats vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_flag("--json", o->json, "print one flat object {\"state.state\":1,...}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
