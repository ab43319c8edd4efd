// RunCli: qlaunch's command line (CLI11), its errors and its help in one place. Exit statuses
// as launcher/cli/reference.h lists them: 0 ok, 1 error, 2 usage (and a few of a verb's own).
#pragma once

#include <string>
#include <string_view>

#include "launcher/cli/command.h"

namespace qlaunch::launcher {

int RunCli(int argc, char** argv);

// The command tree, with no parse yet: what RunCli parses, and what the completion script and the
// tests of --help walk. When a subcommand is parsed, *action holds its work. With `only` naming a
// verb, only that verb (and those its function adds with it) is built, as the whole tree has it:
// what `qlaunch VERB ...` needs. Anything else (empty, an option, an unknown word, "completion",
// which walks the tree) builds it all. Every verb's help ends with its exit statuses.
void BuildCli(CLI::App& app, CommandAction* action, std::string_view only = {});

// "unknown command: 'strat' (did you mean 'start'?)", or with "'qlaunch --help' lists the
// commands" where no verb is close.
std::string UnknownVerbMessage(std::string_view word);

// What `qlaunch VERB --help` prints (cmd_help.cc); a UsageError for a word that is no verb.
std::string VerbHelp(const std::string& verb);

}  // namespace qlaunch::launcher
