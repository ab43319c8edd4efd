// qlaunch completion bash: print the bash completion script for every command and option.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "launcher/cli/command.h"
#include "launcher/cli/completion_script.h"

namespace qlaunch::launcher {

void AddCompletionCommand(CLI::App& app, CommandAction* action) {
  auto shell = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "completion",
      "Print a shell completion script for qlaunch's commands and options (the .deb and\n"
      "'cmake --install' put it where bash-completion finds it).\n"
      "Example: source <(qlaunch completion bash)");
  sub->add_option("SHELL", *shell, "the shell: bash")->required()->check(CLI::IsMember({"bash"}));
  CLI::App* root = &app;
  // The callback owns `shell` (CLI11 writes the parsed value into it): it lives as long as the app.
  sub->callback([root, action, shell] {
    *action = [root] {
      std::fputs(BashCompletionScript("qlaunch", CompletionModel(*root)).c_str(), stdout);
      return 0;
    };
  });
}

}  // namespace qlaunch::launcher
