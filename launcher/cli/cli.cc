#include "launcher/cli/cli.h"

#include <cstdio>
#include <exception>
#include <string_view>

#include <CLI/CLI.hpp>

#include "common/diagnostic.h"
#include "launcher/cli/command.h"
#include "launcher/cli/version.h"

namespace qlaunch::launcher {

namespace {

// Every verb with the function that adds it (some add several), in the order of `qlaunch --help`.
struct VerbGroup {
  const char* names;  // space-separated: the subcommands `add` creates
  void (*add)(CLI::App&, CommandAction*);
};
constexpr VerbGroup kVerbs[] = {
    {"domxml-to-native", AddDomxmlToNativeCommand},
    {"validate", AddValidateCommand},
    {"capabilities", AddCapabilitiesCommand},
    {"start", AddStartCommand},
    {"run", AddRunCommand},
    {"list", AddListCommand},
    {"destroy", AddDestroyCommand},
    {"suspend resume reboot shutdown", AddLifecycleCommands},
    {"qemu-monitor-command", AddMonitorCommand},
    {"dominfo", AddDominfoCommand},
    {"dumpxml", AddDumpxmlCommand},
    {"domblklist", AddDomblklistCommand},
    {"domiflist", AddDomiflistCommand},
    {"domstats", AddDomstatsCommand},
    {"domifaddr", AddDomifaddrCommand},
    {"attach-device", AddAttachDeviceCommand},
    {"detach-device", AddDetachDeviceCommand},
    {"change-media", AddChangeMediaCommand},
    {"setmem", AddSetmemCommand},
    {"setvcpus", AddSetvcpusCommand},
    {"update-memory-device", AddUpdateMemoryDeviceCommand},
    {"migrate", AddMigrateCommand},
    {"save", AddSaveCommand},
    {"restore", AddRestoreCommand},
    {"console", AddConsoleCommand},
    {"prealloc", AddPreallocCommand},
    {"bench", AddBenchCommand},
    {"completion", AddCompletionCommand},  // walks the whole tree: never built alone
};

bool Names(const VerbGroup& g, std::string_view verb) {
  std::string_view names = g.names;
  while (!names.empty()) {
    const size_t space = names.find(' ');
    if (names.substr(0, space) == verb) return true;
    names = space == std::string_view::npos ? std::string_view() : names.substr(space + 1);
  }
  return false;
}

}  // namespace

void BuildCli(CLI::App& app, CommandAction* action, std::string_view only) {
  app.description(
      "qlaunch: start large hugepage QEMU VMs fast and NUMA-correctly, from libvirt domain XML.\n"
      "Run 'qlaunch COMMAND --help' for a command's options.");
  app.name("qlaunch");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("qlaunch ") + VersionString());
  const VerbGroup* alone = nullptr;
  for (const VerbGroup& g : kVerbs)
    if (!only.empty() && only != "completion" && Names(g, only)) alone = &g;
  for (const VerbGroup& g : kVerbs)
    if (!alone || alone == &g) g.add(app, action);
}

int RunCli(int argc, char** argv) {
  CLI::App app;
  CommandAction action;
  // `qlaunch VERB ...` builds VERB alone: the whole tree took 0.5 ms of every start.
  BuildCli(app, &action, argc > 1 ? argv[1] : "");
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
