// qlaunch qemu-monitor-command: one QMP (or HMP) command to a running domain's QEMU, like virsh's.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

namespace {

constexpr std::chrono::milliseconds kQmpTimeout{30000};

struct Options {
  std::string name, command;
  bool hmp = false, pretty = false;
};

int Run(const Options& o) {
  nlohmann::json request;
  if (!o.hmp) {
    request = nlohmann::json::parse(o.command, nullptr, false);
    if (request.is_discarded() || !request.is_object() || !request.contains("execute") ||
        !request["execute"].is_string())
      throw std::runtime_error("COMMAND must be a QMP command as JSON, {\"execute\": \"NAME\", \"arguments\": {...}}; "
                               "got '" + o.command + "' (use --hmp for a human monitor command)");
  }
  StateDir state;
  DomainSession s = OpenDomainSession(state, o.name, Verb::kMonitor, kQmpTimeout);
  if (o.hmp) {
    nlohmann::json out = s.qmp->Execute("human-monitor-command", {{"command-line", o.command}}, kQmpTimeout);
    std::fputs(out.is_string() ? out.get<std::string>().c_str() : out.dump().c_str(), stdout);
    return 0;
  }
  nlohmann::json args = request.contains("arguments") ? request["arguments"] : nlohmann::json(nullptr);
  nlohmann::json reply = {{"return", s.qmp->Execute(request["execute"].get<std::string>(), args, kQmpTimeout)}};
  std::printf("%s\n", reply.dump(o.pretty ? 2 : -1).c_str());
  return 0;
}

}  // namespace

void AddMonitorCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "qemu-monitor-command",
      "Send one command to a running domain's QEMU, like `virsh qemu-monitor-command`: a QMP command\n"
      "as JSON (prints {\"return\": ...}; a QMP error is printed on stderr with exit 1), or with --hmp\n"
      "a human monitor command line (prints its text).\n"
      "Example: qlaunch qemu-monitor-command two-cells '{\"execute\":\"query-status\"}'\n"
      "         qlaunch qemu-monitor-command --hmp two-cells 'info numa'");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("COMMAND", o->command, "QMP JSON, or HMP text with --hmp")->required();
  sub->add_flag("--hmp", o->hmp, "a flag: COMMAND (the argument) is a human monitor command line, not QMP JSON");
  sub->add_flag("--pretty", o->pretty, "indent the JSON reply (QMP)")->excludes("--hmp");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
