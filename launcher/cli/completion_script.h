// A bash completion script for qlaunch, made from the CLI's own tree (every subcommand and
// option as CLI11 knows them), so it cannot fall behind --help. `qlaunch completion bash` prints
// it; the build installs it as share/bash-completion/completions/qlaunch.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace qlaunch::launcher {

struct CompletionOption {
  std::vector<std::string> names;    // "--json", "-h"
  bool takes_value = false;          // the next word is its value
  std::vector<std::string> choices;  // the values it accepts, when CLI11 checks membership
};

struct CompletionCommand {
  std::string name;  // empty: the top level (before any subcommand)
  std::vector<CompletionOption> options;
};

// The commands and options of a CLI11 app: the top level first, then each subcommand.
std::vector<CompletionCommand> CompletionModel(CLI::App& app);

// The bash script completing `program` from that model: subcommand names, each command's
// options, an option's choices after it, file names for other values and positionals.
std::string BashCompletionScript(const std::string& program, const std::vector<CompletionCommand>& commands);

}  // namespace qlaunch::launcher
