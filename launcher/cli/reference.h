// What every command shares and the documentation must say alike: the exit statuses, the
// environment variables and the files qlaunch keeps. One table each; `qlaunch --help` prints
// them (and scripts/make-manpage makes the man page's EXIT STATUS, ENVIRONMENT and FILES from
// that), each verb's --help ends with its exit statuses, and docs/usage.md holds the tables as
// ReferenceMarkdown renders them (launcher/cli/reference_test.cc and tests/cli_docs_test.cc fail
// when any of them disagree).
#pragma once

#include <span>
#include <string>

namespace qlaunch::launcher {

struct ExitStatusInfo {
  int code;
  const char* verb;  // "" for every command
  const char* meaning;
};

struct EnvironmentInfo {
  const char* name;
  const char* meaning;
};

struct FileInfo {
  const char* path;
  const char* meaning;
};

std::span<const ExitStatusInfo> ExitStatuses();
std::span<const EnvironmentInfo> EnvironmentVariables();
std::span<const FileInfo> StateFiles();

// Whether `code` is an exit status of `verb` (the shared ones included).
bool IsExitStatusOf(int code, const std::string& verb);

// The end of `qlaunch VERB --help`: "Exit status: 0 success, 1 ..., 2 ..." and the verb's own.
std::string VerbExitStatusHelp(const std::string& verb);

// The "Exit status:", "Environment:" and "Files:" sections of `qlaunch --help`, one entry a line
// ("    KEY   meaning"), as scripts/make-manpage reads them.
std::string ReferenceHelp();

// One section of docs/usage.md as it must read: "exit-status", "environment" or "files".
std::string ReferenceMarkdown(const std::string& section);

}  // namespace qlaunch::launcher
