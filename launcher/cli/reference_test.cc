// The one table of exit statuses, environment variables and files, against what reads or shows
// them: docs/usage.md holds the tables as they render, every variable the code reads is in the
// table and every one in the table is read, every file of the table is named by the code.
// (The built binary's --help, the man page and the exit statuses mentioned in help and docs:
// tests/cli_docs_test.cc.)
#include "launcher/cli/reference.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "support/build_paths.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text of every source file of the project's modules (no tests; not this table itself).
std::string AllSource() {
  std::string all;
  for (const char* dir : {"common", "domain", "numa", "qemu_cmd", "prealloc", "launcher"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(QLAUNCH_SOURCE_DIR) / dir)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || name.ends_with("_test.cc") || name == "reference.cc") continue;
      if (name.ends_with(".cc") || name.ends_with(".h")) all += Slurp(e.path());
    }
  return all;
}

TEST(Reference, UsageMdHoldsEachTableAsItRenders) {
  const std::string usage = Slurp(fs::path(QLAUNCH_SOURCE_DIR) / "docs/usage.md");
  ASSERT_FALSE(usage.empty());
  for (const char* section : {"exit-status", "environment", "files"})
    EXPECT_NE(usage.find(ReferenceMarkdown(section)), std::string::npos)
        << "docs/usage.md does not hold the " << section << " table of launcher/cli/reference.cc as it renders:\n"
        << ReferenceMarkdown(section);
}

TEST(Reference, EveryVariableTheCodeReadsIsInTheTableAndBack) {
  const std::string source = AllSource();
  std::set<std::string> read, table;
  const std::regex literal("\"(QLAUNCH_[A-Z0-9_]+)\"");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), literal); it != std::sregex_iterator(); ++it)
    read.insert((*it)[1]);
  for (const EnvironmentInfo& e : EnvironmentVariables()) table.insert(e.name);
  ASSERT_FALSE(read.empty());
  for (const std::string& name : read) EXPECT_TRUE(table.contains(name)) << name << " is read but not in the table";
  for (const std::string& name : table)
    EXPECT_NE(source.find("\"" + name + "\""), std::string::npos) << name << " is in the table but no code reads it";
}

TEST(Reference, EveryFileOfTheTableIsNamedByTheCode) {
  const std::string source = AllSource();
  for (const FileInfo& f : StateFiles()) {
    std::string path = f.path;
    if (path.ends_with("/")) path.pop_back();
    std::string last = path.substr(path.rfind('/') + 1);
    if (last.starts_with("NAME")) last = last.substr(4);  // NAME_VARS.fd
    if (last.starts_with("$")) continue;                  // a directory of the environment table
    EXPECT_NE(source.find(last), std::string::npos) << f.path << ": no code names " << last;
  }
}

TEST(Reference, AVerbsHelpListsTheSharedStatusesAndItsOwn) {
  const std::string run = VerbExitStatusHelp("run"), list = VerbExitStatusHelp("list");
  EXPECT_NE(list.find("\n  1  an error"), std::string::npos) << list;
  EXPECT_NE(list.find("\n  2  a usage error"), std::string::npos) << list;
  EXPECT_EQ(list.find("\n  3  "), std::string::npos) << list;
  EXPECT_NE(run.find("\n  3  the guest crashed"), std::string::npos) << run;
  EXPECT_NE(run.find("\n  0  the guest powered off"), std::string::npos) << run;
  EXPECT_EQ(run.find("\n  0  success"), std::string::npos) << "run's own 0 replaces the shared one: " << run;
  EXPECT_TRUE(IsExitStatusOf(3, "detach-device"));
  EXPECT_FALSE(IsExitStatusOf(3, "attach-device"));
  EXPECT_TRUE(IsExitStatusOf(2, "attach-device"));
}

}  // namespace
}  // namespace qlaunch::launcher
