// Splitting a command line printed for a POSIX shell (e.g. `virsh domxml-to-native`, which
// prints `ENV=... /usr/bin/qemu-system-x86_64 -name ... -object '{"qom-type":...}'` on one
// line) back into its words, the way sh would: blanks separate words, '...' is literal, "..."
// honours \" \\ \$ \` and a backslash-newline, a backslash outside quotes escapes the next
// character. No expansions.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qlaunch::testing {

// Throws std::invalid_argument on an unterminated quote or a trailing backslash.
std::vector<std::string> SplitShellWords(std::string_view line);

// A printed command line split into its leading NAME=VALUE environment assignments and the
// command's argv (argv[0] is the first word that is not an assignment).
struct ShellCommand {
  std::vector<std::string> env;
  std::vector<std::string> argv;
};
ShellCommand ParseShellCommand(std::string_view line);

}  // namespace qlaunch::testing
