// The subcommands of the qlaunch CLI. Each lives in launcher/cli/cmd_<name>.cc and registers
// itself on the CLI11 app: it adds its subcommand with its options, and when that subcommand
// is the one parsed, stores the work to do in *action. RunCli (launcher/cli/cli.cc) then runs it.
// launcher/cli/verb_table.cc lists them all, with their groups and summaries. Exit statuses
// (launcher/cli/reference.h): 0 success, 1 error (DiagnosticError or std::exception are caught by
// RunCli and printed on stderr), 2 usage (CLI11's errors, and UsageError from a verb).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace qlaunch::launcher {

using CommandAction = std::function<int()>;

void AddDomxmlToNativeCommand(CLI::App& app, CommandAction* action);
void AddValidateCommand(CLI::App& app, CommandAction* action);
void AddCapabilitiesCommand(CLI::App& app, CommandAction* action);
void AddPreallocCommand(CLI::App& app, CommandAction* action);
void AddStartCommand(CLI::App& app, CommandAction* action);
void AddListCommand(CLI::App& app, CommandAction* action);
void AddDestroyCommand(CLI::App& app, CommandAction* action);
void AddCompletionCommand(CLI::App& app, CommandAction* action);
void AddLifecycleCommands(CLI::App& app, CommandAction* action);  // suspend resume reboot shutdown
void AddMonitorCommand(CLI::App& app, CommandAction* action);
void AddDominfoCommand(CLI::App& app, CommandAction* action);
void AddDumpxmlCommand(CLI::App& app, CommandAction* action);     // cmd_dumpxml.cc
void AddDomblklistCommand(CLI::App& app, CommandAction* action);  // cmd_domblklist.cc
void AddDomiflistCommand(CLI::App& app, CommandAction* action);   // cmd_domiflist.cc
void AddDomstatsCommand(CLI::App& app, CommandAction* action);    // cmd_domstats.cc
void AddDomifaddrCommand(CLI::App& app, CommandAction* action);   // cmd_domifaddr.cc
void AddAttachDeviceCommand(CLI::App& app, CommandAction* action);  // cmd_attach_device.cc
void AddDetachDeviceCommand(CLI::App& app, CommandAction* action);  // cmd_detach_device.cc
void AddChangeMediaCommand(CLI::App& app, CommandAction* action);  // cmd_change_media.cc
void AddSetmemCommand(CLI::App& app, CommandAction* action);       // cmd_setmem.cc
void AddSetvcpusCommand(CLI::App& app, CommandAction* action);     // cmd_setvcpus.cc
void AddUpdateMemoryDeviceCommand(CLI::App& app, CommandAction* action);  // cmd_update_memory_device.cc
void AddMigrateCommand(CLI::App& app, CommandAction* action);     // cmd_migrate.cc
void AddSaveCommand(CLI::App& app, CommandAction* action);        // cmd_save.cc
void AddRestoreCommand(CLI::App& app, CommandAction* action);     // cmd_restore.cc
void AddRunCommand(CLI::App& app, CommandAction* action);
void AddConsoleCommand(CLI::App& app, CommandAction* action);
void AddBenchCommand(CLI::App& app, CommandAction* action);
void AddPoolCommand(CLI::App& app, CommandAction* action);         // cmd_pool.cc
void AddHelpCommand(CLI::App& app, CommandAction* action);        // cmd_help.cc
void AddDefineCommand(CLI::App& app, CommandAction* action);      // cmd_define.cc
void AddUndefineCommand(CLI::App& app, CommandAction* action);    // cmd_undefine.cc
void AddEditCommand(CLI::App& app, CommandAction* action);        // cmd_edit.cc
void AddAutostartCommand(CLI::App& app, CommandAction* action);   // cmd_autostart.cc

}  // namespace qlaunch::launcher
