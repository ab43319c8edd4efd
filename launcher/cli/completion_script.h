// A bash completion script for qlaunch, made from the CLI's own tree (every subcommand, option
// and positional as CLI11 knows them, with the kind of value each takes: launcher/cli/arg_kind.h),
// so it cannot fall behind --help. `qlaunch completion bash` prints it; the build installs it as
// share/bash-completion/completions/qlaunch.
#pragma once

#include <string>
#include <vector>

#include "launcher/cli/arg_kind.h"

namespace CLI {
class App;
}

namespace qlaunch::launcher {

struct CompletionOption {
  std::vector<std::string> names;    // "--json", "-h"
  bool takes_value = false;          // the next word is its value
  std::vector<std::string> choices;  // the values it accepts, when CLI11 checks membership
  ArgKind kind = ArgKind::kText;     // what else its value is
};

struct CompletionPositional {
  std::string name;  // "NAME", "DOMAIN.xml"
  std::vector<std::string> choices;
  ArgKind kind = ArgKind::kText;
};

struct CompletionCommand {
  std::string name;  // empty: the top level (before any subcommand)
  std::vector<CompletionOption> options;
  std::vector<CompletionPositional> positionals;  // in order
};

// The commands and options of a CLI11 app: the top level first, then each subcommand.
std::vector<CompletionCommand> CompletionModel(CLI::App& app);

// The bash script completing `program` from that model: subcommand names, each command's
// options; for a value (an option's, or the positional at the cursor): its choices, file names
// for a file or path, directories for a directory, the domains of $QLAUNCH_STATE_DIR (default
// /run/qlaunch) for a domain's name (and the defined ones after --inactive), the definitions of
// $QLAUNCH_CONFIG_DIR (default /etc/qlaunch/domains) for a defined domain's name (with files
// where a file is taken too: start, run), user names for a user, commands for a command, and nothing
// for any other value (numbers, sizes, URIs, text).
std::string BashCompletionScript(const std::string& program, const std::vector<CompletionCommand>& commands);

}  // namespace qlaunch::launcher
