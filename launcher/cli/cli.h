// RunCli: qlaunch's command line (CLI11). Exit codes: 0 ok, 1 error, 2 usage.
#pragma once

#include <string_view>

#include "launcher/cli/command.h"

namespace qlaunch::launcher {

int RunCli(int argc, char** argv);

// The command tree, with no parse yet: what RunCli parses, and what the completion script and the
// tests of --help walk. When a subcommand is parsed, *action holds its work. With `only` naming a
// verb, only that verb (and those its function adds with it) is built, as the whole tree has it:
// what `qlaunch VERB ...` needs. Anything else (empty, an option, an unknown word, "completion",
// which walks the tree) builds it all.
void BuildCli(CLI::App& app, CommandAction* action, std::string_view only = {});

}  // namespace qlaunch::launcher
