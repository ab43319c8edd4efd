// BuildCli with `only`: `qlaunch VERB` builds VERB alone, and that verb must be the one of the
// whole tree, options and help alike; every other first word gets the whole tree.
#include "launcher/cli/cli.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace qlaunch::launcher {
namespace {

// CLI11 lists an option's Excludes/Needs in the order of the options' addresses: sorted here.
std::string SortedLinks(const std::string& help) {
  std::istringstream in(help);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    for (const char* key : {" Excludes:", " Needs:"}) {
      const size_t at = line.find(key);
      if (at == std::string::npos) continue;
      std::istringstream words(line.substr(at + std::strlen(key)));
      std::set<std::string> sorted{std::istream_iterator<std::string>(words), {}};
      line = line.substr(0, at + std::strlen(key));
      for (const std::string& w : sorted) line += " " + w;
    }
    out += line + "\n";
  }
  return out;
}

// Every subcommand of a tree: name -> its --help text.
std::map<std::string, std::string> Verbs(std::string_view only) {
  CLI::App app;
  CommandAction action;
  BuildCli(app, &action, only);
  std::map<std::string, std::string> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    out[sub->get_name()] = SortedLinks(sub->help());
  return out;
}

TEST(BuildCli, EveryVerbBuiltAloneIsTheVerbOfTheWholeTree) {
  const std::map<std::string, std::string> all = Verbs("");
  ASSERT_GT(all.size(), 20u);
  for (const auto& [name, help] : all) {
    SCOPED_TRACE(name);
    const std::map<std::string, std::string> alone = Verbs(name);
    ASSERT_EQ(alone.count(name), 1u);
    EXPECT_EQ(alone.at(name), help);
    for (const auto& [other, other_help] : alone) {  // what is built with it is of the tree too
      ASSERT_EQ(all.count(other), 1u) << other;
      EXPECT_EQ(other_help, all.at(other)) << other;
    }
    if (name == "completion") EXPECT_EQ(alone.size(), all.size()) << "completion walks the whole tree";
    else EXPECT_LT(alone.size(), 5u) << "built more than its group";
  }
}

TEST(BuildCli, AnythingButAVerbBuildsTheWholeTree) {
  const size_t all = Verbs("").size();
  for (const char* first : {"--help", "-h", "strat", "--version", "START"}) EXPECT_EQ(Verbs(first).size(), all) << first;
}

// The groups: the lifecycle verbs come together, as one function adds them.
TEST(BuildCli, AVerbOfAGroupBringsItsGroup) {
  std::vector<std::string> names;
  for (const auto& [name, help] : Verbs("resume")) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"reboot", "resume", "shutdown", "suspend"}));
  EXPECT_EQ(Verbs("start").size(), 1u);
}

}  // namespace
}  // namespace qlaunch::launcher
