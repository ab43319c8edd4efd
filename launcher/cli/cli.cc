#include "launcher/cli/cli.h"

#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "common/diagnostic.h"
#include "launcher/cli/command.h"
#include "launcher/cli/version.h"

namespace qlaunch::launcher {

void BuildCli(CLI::App& app, CommandAction* action) {
  app.description(
      "qlaunch: start large hugepage QEMU VMs fast and NUMA-correctly, from libvirt domain XML.\n"
      "Run 'qlaunch COMMAND --help' for a command's options.");
  app.name("qlaunch");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("qlaunch ") + VersionString());
  AddDomxmlToNativeCommand(app, action);
  AddValidateCommand(app, action);
  AddCapabilitiesCommand(app, action);
  AddStartCommand(app, action);
  AddRunCommand(app, action);
  AddListCommand(app, action);
  AddDestroyCommand(app, action);
  AddLifecycleCommands(app, action);
  AddMonitorCommand(app, action);
  AddDominfoCommand(app, action);
  AddDumpxmlCommand(app, action);
  AddDomblklistCommand(app, action);
  AddDomiflistCommand(app, action);
  AddDomstatsCommand(app, action);
  AddDomifaddrCommand(app, action);
  AddAttachDeviceCommand(app, action);
  AddDetachDeviceCommand(app, action);
  AddChangeMediaCommand(app, action);
  AddSetmemCommand(app, action);
  AddSetvcpusCommand(app, action);
  AddUpdateMemoryDeviceCommand(app, action);
  AddMigrateCommand(app, action);
  AddSaveCommand(app, action);
  AddRestoreCommand(app, action);
  AddConsoleCommand(app, action);
  AddPreallocCommand(app, action);
  AddBenchCommand(app, action);
  AddCompletionCommand(app, action);
}

int RunCli(int argc, char** argv) {
  CLI::App app;
  CommandAction action;
  BuildCli(app, &action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (!action) return 2;
  try {
    return action();
  } catch (const DiagnosticError& e) {
    for (const auto& d : e.diagnostics()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qlaunch: error: %s\n", e.what());
  }
  return 1;
}

}  // namespace qlaunch::launcher
