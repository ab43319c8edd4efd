// RunCli: qlaunch's command line (CLI11). Exit codes: 0 ok, 1 error, 2 usage.
#pragma once

#include "launcher/cli/command.h"

namespace qlaunch::launcher {

int RunCli(int argc, char** argv);

// The whole command tree, with no parse yet: what RunCli parses, and what the completion script
// and the tests of --help walk. When a subcommand is parsed, *action holds its work.
void BuildCli(CLI::App& app, CommandAction* action);

}  // namespace qlaunch::launcher
