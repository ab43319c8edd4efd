// The completion script, made from the real CLI tree and run by a real bash: what it offers
// for a few command lines a user types.
#include "launcher/cli/completion_script.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "launcher/cli/cli.h"
#include "support/build_paths.h"

namespace qlaunch::launcher {
namespace {

std::vector<CompletionCommand> RealModel() {
  CLI::App app;
  CommandAction action;
  BuildCli(app, &action);
  return CompletionModel(app);
}

// What bash's completion offers for `words` (the last one is the word being completed).
std::set<std::string> Complete(const std::vector<std::string>& words) {
  // Written once per test process, and removed at its exit: nothing is left in /tmp.
  struct ScriptFile {
    std::string path = std::filesystem::temp_directory_path() / ("qlaunch-completion-" + std::to_string(getpid()));
    ScriptFile() { std::ofstream(path) << BashCompletionScript("qlaunch", RealModel()); }
    ~ScriptFile() { std::filesystem::remove(path); }
  };
  static const ScriptFile file;
  const std::string& script = file.path;
  std::string line = "source " + script + "; COMP_WORDS=(";
  for (const auto& w : words) line += "'" + w + "' ";
  line += "); COMP_CWORD=" + std::to_string(words.size() - 1) + "; _qlaunch; printf '%s\\n' \"${COMPREPLY[@]}\"";
  // The line has quotes of its own: bash reads it from the environment. Run from the source
  // tree, so file names complete against examples/.
  setenv("QL_LINE", line.c_str(), 1);
  FILE* p = popen(("cd '" + std::string(QLAUNCH_SOURCE_DIR) + "' && bash --norc -c 'eval \"$QL_LINE\"'").c_str(), "r");
  std::set<std::string> out;
  if (!p) return out;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) {
    std::string s(buf);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    if (!s.empty()) out.insert(s);
  }
  pclose(p);
  return out;
}

TEST(CompletionScript, OffersEverySubcommandAtTheTop) {
  std::set<std::string> got = Complete({"qlaunch", ""});
  for (const char* c : {"start", "list", "destroy", "domxml-to-native", "validate", "capabilities", "prealloc",
                        "completion", "--help", "--version"})
    EXPECT_TRUE(got.contains(c)) << c;
  EXPECT_EQ(Complete({"qlaunch", "st"}), (std::set<std::string>{"start"}));
}

TEST(CompletionScript, OffersTheOptionsOfTheSubcommandTyped) {
  EXPECT_EQ(Complete({"qlaunch", "start", "--pre"}), (std::set<std::string>{"--prealloc"}));
  EXPECT_TRUE(Complete({"qlaunch", "list", "--"}).contains("--json"));
  // Options of another subcommand are not offered.
  EXPECT_FALSE(Complete({"qlaunch", "list", "--"}).contains("--prealloc"));
}

TEST(CompletionScript, OffersAnOptionsChoicesAfterIt) {
  EXPECT_EQ(Complete({"qlaunch", "domxml-to-native", "--format", ""}), (std::set<std::string>{"shell", "lines", "json"}));
  EXPECT_EQ(Complete({"qlaunch", "start", "--prealloc", "l"}), (std::set<std::string>{"launcher"}));
}

TEST(CompletionScript, OffersFilesForADomainXml) {
  // Run from the source tree: examples/ holds the XMLs.
  std::set<std::string> got = Complete({"qlaunch", "start", "examples/demo"});
  EXPECT_TRUE(got.contains("examples/demo-hugepages.xml")) << got.size();
}

// A state root with two domains' entries (and a file that is none), as $QLAUNCH_STATE_DIR.
class CompletionDomainsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("qlaunch-completion-state-" + std::to_string(getpid()));
    std::filesystem::create_directories(root_ / "vm-one");
    std::filesystem::create_directories(root_ / "vm-two");
    std::ofstream(root_ / "lock-file").flush();
    setenv("QLAUNCH_STATE_DIR", root_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("QLAUNCH_STATE_DIR");
    std::filesystem::remove_all(root_);
  }
  std::filesystem::path root_;
};

TEST_F(CompletionDomainsTest, ANameCompletesTheDomainsOfTheStateDir) {
  const std::set<std::string> both{"vm-one", "vm-two"};
  EXPECT_EQ(Complete({"qlaunch", "destroy", ""}), both);
  EXPECT_EQ(Complete({"qlaunch", "dominfo", "--json", "vm-t"}), (std::set<std::string>{"vm-two"}));
  // An option's value is skipped in counting: NAME is still the first positional.
  EXPECT_EQ(Complete({"qlaunch", "shutdown", "--timeout", "30", ""}), both);
  // The positional after NAME is what it is: a device file, a count.
  EXPECT_TRUE(
      Complete({"qlaunch", "attach-device", "vm-one", "examples/demo"}).contains("examples/demo-hugepages.xml"));
  EXPECT_EQ(Complete({"qlaunch", "setvcpus", "vm-one", ""}), (std::set<std::string>{}));
}

TEST_F(CompletionDomainsTest, NoDomainsWithoutAStateDir) {
  setenv("QLAUNCH_STATE_DIR", (root_ / "none").c_str(), 1);
  EXPECT_EQ(Complete({"qlaunch", "destroy", ""}), (std::set<std::string>{}));
}

// Defined domains ($QLAUNCH_CONFIG_DIR: NAME.xml, and what is none: a hidden one, another file),
// beside a state root with one domain running that is defined too and one that is not.
class CompletionDefinedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() / ("qlaunch-completion-defined-" + std::to_string(getpid()));
    std::filesystem::create_directories(base_ / "config" / "autostart");
    for (const char* f : {"vm-def.xml", "vm-both.xml", ".vm-hidden.xml", "notes.txt"})
      std::ofstream(base_ / "config" / f) << "<domain/>";
    std::filesystem::create_directories(base_ / "state" / "vm-both");
    std::filesystem::create_directories(base_ / "state" / "vm-run");
    setenv("QLAUNCH_CONFIG_DIR", (base_ / "config").c_str(), 1);
    setenv("QLAUNCH_STATE_DIR", (base_ / "state").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("QLAUNCH_CONFIG_DIR");
    unsetenv("QLAUNCH_STATE_DIR");
    std::filesystem::remove_all(base_);
  }
  std::filesystem::path base_;
};

TEST_F(CompletionDefinedTest, TheVerbsOfDefinedDomainsCompleteTheirNames) {
  const std::set<std::string> defined{"vm-both", "vm-def"}, running{"vm-both", "vm-run"},
      all{"vm-both", "vm-def", "vm-run"};
  for (const char* verb : {"undefine", "edit", "autostart"}) EXPECT_EQ(Complete({"qlaunch", verb, ""}), defined) << verb;
  EXPECT_EQ(Complete({"qlaunch", "autostart", "--disable", "vm-d"}), (std::set<std::string>{"vm-def"}));
  // start and run take a file or a defined domain's name: both complete.
  for (const char* verb : {"start", "run"}) {
    EXPECT_EQ(Complete({"qlaunch", verb, "vm-"}), defined) << verb;
    EXPECT_TRUE(Complete({"qlaunch", verb, "examples/demo"}).contains("examples/demo-hugepages.xml")) << verb;
  }
  // dumpxml: the running ones; with --inactive , the defined ones too.
  EXPECT_EQ(Complete({"qlaunch", "dumpxml", ""}), running);
  EXPECT_EQ(Complete({"qlaunch", "dumpxml", "--inactive", ""}), all);
  // A verb on a running domain only: the running ones.
  EXPECT_EQ(Complete({"qlaunch", "destroy", ""}), running);
}

TEST_F(CompletionDefinedTest, NoDefinedNamesWithoutAConfigDir) {
  setenv("QLAUNCH_CONFIG_DIR", (base_ / "none").c_str(), 1);
  EXPECT_EQ(Complete({"qlaunch", "undefine", ""}), (std::set<std::string>{}));
  EXPECT_EQ(Complete({"qlaunch", "dumpxml", "--inactive", ""}), (std::set<std::string>{"vm-both", "vm-run"}));
}

TEST(CompletionScript, CompletionOffersItsShellAndHelpItsCommands) {
  EXPECT_EQ(Complete({"qlaunch", "completion", ""}), (std::set<std::string>{"bash"}));
  EXPECT_EQ(Complete({"qlaunch", "help", "st"}), (std::set<std::string>{"start"}));
  EXPECT_TRUE(Complete({"qlaunch", "help", ""}).contains("update-memory-device"));
}

// Run from the source tree, where files and directories abound: none is offered for a value
// that is no file.
TEST(CompletionScript, NoFilesWhereTheValueIsNoFile) {
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"qlaunch", "prealloc", "--threads", ""},
           {"qlaunch", "prealloc", "--size", ""},
           {"qlaunch", "bench", "--runs", ""},
           {"qlaunch", "setmem", "vm1", ""},
           {"qlaunch", "migrate", "vm1", ""},
           {"qlaunch", "qemu-monitor-command", "vm1", ""},
           {"qlaunch", "capabilities", "--node-name", ""},
           {"qlaunch", "update-memory-device", "vm1", "--alias", ""}})
    EXPECT_EQ(Complete(words), (std::set<std::string>{})) << words[1] << " " << words[2];
  // A user for --user, directories for --sysfs, files for a path.
  EXPECT_TRUE(Complete({"qlaunch", "start", "--user", "roo"}).contains("root"));
  EXPECT_EQ(Complete({"qlaunch", "validate", "--sysfs", "exampl"}), (std::set<std::string>{"examples"}));
  EXPECT_TRUE(Complete({"qlaunch", "start", "--qemu", "scripts/t"}).contains("scripts/test"));
}

TEST(CompletionModel, EveryOptionOfTheCliIsInIt) {
  CLI::App app;
  CommandAction action;
  BuildCli(app, &action);
  std::vector<CompletionCommand> model = CompletionModel(app);
  ASSERT_EQ(model.size(), app.get_subcommands([](CLI::App*) { return true; }).size() + 1);
  size_t options = 0;
  for (const auto& c : model) options += c.options.size();
  EXPECT_GT(options, 20u);
  // --format of domxml-to-native takes a value with three choices; --json of list is a flag.
  for (const auto& c : model)
    for (const auto& o : c.options) {
      if (c.name == "domxml-to-native" && o.names == std::vector<std::string>{"--format"}) {
        EXPECT_TRUE(o.takes_value);
        EXPECT_EQ(o.choices, (std::vector<std::string>{"shell", "lines", "json"}));
      }
      if (c.name == "list" && o.names == std::vector<std::string>{"--json"}) {
        EXPECT_FALSE(o.takes_value);
      }
    }
}

}  // namespace
}  // namespace qlaunch::launcher
