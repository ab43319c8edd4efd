// The verb table against the CLI tree it builds, and the verb suggested for a mistyped word.
#include "launcher/cli/verb_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "launcher/cli/cli.h"

namespace qlaunch::launcher {
namespace {

TEST(VerbTable, NamesEveryVerbOfTheTreeOnce) {
  CLI::App app;
  CommandAction action;
  BuildCli(app, &action);
  std::set<std::string> tree, table;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) tree.insert(sub->get_name());
  for (const VerbInfo& v : AllVerbs()) EXPECT_TRUE(table.insert(v.name).second) << v.name << " twice";
  EXPECT_EQ(tree, table);
}

TEST(VerbTable, GroupsComeTogetherAndVerbsAlphabetically) {
  std::set<std::string> groups_done;
  std::string group, previous;
  for (const VerbInfo& v : AllVerbs()) {
    if (v.group != group) {
      EXPECT_TRUE(groups_done.insert(v.group).second) << v.group << " split by another group";
      group = v.group;
      previous.clear();
    }
    EXPECT_LT(previous, v.name) << "in " << group;
    previous = v.name;
    EXPECT_FALSE(std::string(v.summary).empty()) << v.name;
    EXPECT_LT(std::string(v.summary).size(), 80u) << v.name << ": one line in `qlaunch --help`";
  }
  EXPECT_EQ(groups_done, (std::set<std::string>{"Domain Management", "Domain Monitoring", "Host and Hypervisor",
                                                 "qlaunch itself"}));
}

TEST(ClosestVerb, SuggestsWhatASlipMeant) {
  EXPECT_EQ(ClosestVerb("strat"), "start");     // two letters swapped
  EXPECT_EQ(ClosestVerb("destory"), "destroy");
  EXPECT_EQ(ClosestVerb("lsit"), "list");
  EXPECT_EQ(ClosestVerb("dumxml"), "dumpxml");  // a letter missing
  EXPECT_EQ(ClosestVerb("Start"), "start");     // case
  EXPECT_EQ(ClosestVerb("capa"), "capabilities");  // the start of one verb
  EXPECT_EQ(ClosestVerb("create"), "");          // virsh's word for start: nothing close
  EXPECT_EQ(ClosestVerb("xyzzy"), "");
  EXPECT_EQ(ClosestVerb("dom"), "");             // the start of several
}

}  // namespace
}  // namespace qlaunch::launcher
