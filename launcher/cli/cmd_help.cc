// qlaunch help [COMMAND]: the commands (as `qlaunch --help`), or one command's help, as
// `qlaunch COMMAND --help` prints it (as `virsh help COMMAND`).
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/cli.h"
#include "launcher/cli/command.h"
#include "launcher/cli/top_help.h"
#include "launcher/cli/usage_error.h"
#include "launcher/cli/verb_table.h"

namespace qlaunch::launcher {

// What `qlaunch VERB --help` prints; a UsageError naming the closest verb for any other word.
std::string VerbHelp(const std::string& verb) {
  if (!FindVerb(verb)) throw UsageError(UnknownVerbMessage(verb));
  CLI::App app;
  CommandAction unused;
  BuildCli(app, &unused, verb);
  return app.get_subcommand(verb)->help("qlaunch");
}

void AddHelpCommand(CLI::App& app, CommandAction* action) {
  auto verb = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "help",
      "Print the commands, grouped, with the exit statuses, environment and files they share (as\n"
      "qlaunch --help), or with COMMAND that command's help (as qlaunch COMMAND --help).\n"
      "Example: qlaunch help start");
  SetKind(sub->add_option("COMMAND", *verb, "the command to explain"), ArgKind::kVerb);
  sub->callback([action, verb] {
    *action = [verb] {
      std::fputs(verb->empty() ? TopHelp().c_str() : VerbHelp(*verb).c_str(), stdout);
      return 0;
    };
  });
}

}  // namespace qlaunch::launcher
