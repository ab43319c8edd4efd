// What an option's or a positional's value is, said once where it is added: it shows in --help
// as the value's type (DOMAIN.xml FILE|-, --user USER[:GROUP]), the completion script completes
// it by its kind (files, directories, the domains in the state dir, the defined ones, users, commands; nothing
// for numbers and other text), and RunCli checks the input files before a verb runs
// (launcher/cli/input_file.h).
#pragma once

#include <string>

namespace CLI {
class Option;
}

namespace qlaunch::launcher {

enum class ArgKind {
  kText,         // anything else (numbers, sizes, URIs, names that are no domain): not completed
  kInputFile,    // a file qlaunch reads: checked before the verb runs
  kInputOrStdin, // the same, or "-" for standard input
  kInputOrDefined, // the same, or the NAME of a defined domain (start, run): files and definitions complete
  kPath,         // a path qlaunch writes or hands on (an output file, a binary, a medium): files complete
  kDir,          // a directory
  kDomain,       // a domain's <name>: the domains in $QLAUNCH_STATE_DIR complete (and, after a
                 // command's --inactive, the defined ones too)
  kDefined,      // a defined domain's <name>: the definitions in $QLAUNCH_CONFIG_DIR complete
  kUser,         // USER[:GROUP]
  kVerb,         // a qlaunch command
};

// Marks the option's value (sets its CLI11 type name); returns it.
CLI::Option* SetKind(CLI::Option* opt, ArgKind kind);

// The kind an option was marked with (kText when none).
ArgKind KindOf(const CLI::Option& opt);

}  // namespace qlaunch::launcher
