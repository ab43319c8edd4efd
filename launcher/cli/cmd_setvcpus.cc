// qlaunch setvcpus: plug or unplug a running domain's vCPUs, as `virsh setvcpus --live` does.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/set_vcpus.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  SetVcpusOptions set;
  unsigned timeout_s = 30;
  bool live = false, current = false, config = false, maximum = false, guest = false, json = false;
};

int Run(Options o) {
  if (o.config)
    throw std::runtime_error("--config: qlaunch keeps no stored definition of a domain to change; setvcpus acts on "
                             "the running domain only (--live)");
  if (o.maximum) throw std::runtime_error("--maximum: the most vCPUs a running domain may have is fixed at its start (<vcpu>)");
  if (o.guest) throw std::runtime_error("--guest: qlaunch does not set vCPUs through the guest agent");
  o.set.unplug_wait = std::chrono::seconds(o.timeout_s);
  StateDir state;
  const SetVcpusResult r = SetVcpus(state, o.set);
  if (o.json)
    std::printf("%s\n", nlohmann::json({{"before", r.before}, {"after", r.after}, {"maximum", r.max}, {"qmp", r.qmp}})
                            .dump()
                            .c_str());
  return 0;
}

}  // namespace

void AddSetvcpusCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "setvcpus",
      "Plug or unplug vCPUs of a running domain, as `virsh setvcpus --live` does under libvirt 9.0:\n"
      "QMP device_add of the CPU type QEMU reports (query-hotpluggable-cpus) with its socket, core,\n"
      "thread and guest cell, id vcpu<N>; device_del of the last ones, waiting for the guest to let\n"
      "go. COUNT is at most the domain's <vcpu> and, going down, at least its <vcpu current> at start\n"
      "(those vCPUs stay). Start a domain with <vcpu current='2'>8</vcpu> to have room to grow.\n"
      "dominfo and dumpxml show the vCPUs that run. Unplugging is refused under TCG: QEMU keeps an\n"
      "unplugged vCPU's translator state there, and the next plug or save loses the guest.\n"
      "Example: qlaunch setvcpus vm1 4");
  SetKind(sub->add_option("NAME", o->set.name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("COUNT", o->set.count, "the number of vCPUs to run")->required();
  sub->add_option("--timeout", o->timeout_s, "seconds to wait for the guest to release each vCPU unplugged")
      ->capture_default_str();
  sub->add_flag("--live", o->live, "act on the running domain (what qlaunch always does)");
  sub->add_flag("--current", o->current, "the same as --live for a running domain");
  sub->add_flag("--config", o->config, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--maximum", o->maximum, "refused: the maximum is fixed while the domain runs");
  sub->add_flag("--guest", o->guest, "refused: not through the guest agent");
  sub->add_flag("--json", o->json, "print {\"before\",\"after\",\"maximum\",\"qmp\": the commands sent}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
