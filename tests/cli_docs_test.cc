// The documentation against the built binary: every option any `qlaunch VERB --help` shows is
// documented in docs/usage.md (in a section that names the verb), every exit status that a
// --help, docs/usage.md or README.md mentions is one of the table's (launcher/cli/reference.cc),
// README.md names every verb, and the man page the build wrote holds the binary's tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "launcher/cli/reference.h"
#include "launcher/cli/verb_table.h"
#include "support/build_paths.h"
#include "support/qlaunch_run.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

using launcher::AllVerbs;

// `text` matched literally inside a regex.
std::string Escaped(const std::string& text) {
  return std::regex_replace(text, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

std::string Doc(const std::string& name) { return Slurp(std::string(QLAUNCH_SOURCE_DIR) + "/" + name); }

// Each verb's --help, from the binary.
const std::map<std::string, std::string>& VerbHelps() {
  static const std::map<std::string, std::string> helps = [] {
    std::map<std::string, std::string> out;
    for (const launcher::VerbInfo& v : AllVerbs()) {
      RunResult r = RunQlaunch({v.name, "--help"});
      EXPECT_EQ(r.exit_code, 0) << v.name << ": " << r.Describe();
      out[v.name] = r.out;
    }
    return out;
  }();
  return helps;
}

// The long options of a --help's option lines ("  --json  print ...", "  -h,--help  ...",
// "  --config,--persistent  ..."), but --help.
std::set<std::string> OptionsOf(const std::string& help) {
  std::set<std::string> out;
  std::istringstream in(help);
  const std::regex line("^  ((?:-[a-zA-Z]|--[a-z][a-z0-9-]*)(?:,(?:-[a-zA-Z]|--[a-z][a-z0-9-]*))*)");
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    std::istringstream names(m[1].str());
    for (std::string name; std::getline(names, name, ',');)
      if (name.starts_with("--") && name != "--help") out.insert(name);
  }
  return out;
}

// usage.md's sections, split at every heading (not at a shell comment in a code block).
std::vector<std::string> Sections(const std::string& doc) {
  std::vector<std::string> out(1);
  std::istringstream in(doc);
  bool code = false;
  for (std::string l; std::getline(in, l);) {
    if (l.starts_with("```")) code = !code;
    if (!code && l.starts_with("#")) out.emplace_back();
    out.back() += l + "\n";
  }
  return out;
}

// A section names a verb as `qlaunch VERB` or `VERB` in backquotes, followed by a space or the
// closing quote.

bool NamesVerb(const std::string& section, const std::string& verb) {
  const std::regex named("(qlaunch |`)" + Escaped(verb) + "[ `]");
  return std::regex_search(section, named);
}

bool NamesOption(const std::string& section, const std::string& option) {
  const std::regex named(option + "(?![a-z0-9-])");
  return std::regex_search(section, named);
}

TEST(CliDocs, EveryOptionInAnyHelpIsDocumentedInUsageMd) {
  const std::vector<std::string> sections = Sections(Doc("docs/usage.md"));
  std::string undocumented;
  for (const auto& [verb, help] : VerbHelps()) {
    const std::set<std::string> options = OptionsOf(help);
    if (verb == "start") {
      EXPECT_TRUE(options.contains("--prealloc")) << "the option lines were not found: " << help;
    }
    for (const std::string& option : options) {
      bool found = false;
      for (const std::string& s : sections) found |= NamesVerb(s, verb) && NamesOption(s, option);
      if (!found) undocumented += "  " + verb + " " + option + "\n";
    }
  }
  EXPECT_EQ(undocumented, "") << "in `qlaunch VERB --help` but in no section of docs/usage.md that names the verb:\n"
                              << undocumented;
}

// "exit 1", "exits 1", "exit status 3", "Exit 1", "exit code 2".
std::vector<int> ExitStatusesMentioned(const std::string& text) {
  std::vector<int> out;
  const std::regex mention("\\b[Ee]xit(?:s| status| code| with)? ([0-9]+)\\b");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), mention); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi((*it)[1]));
  return out;
}

TEST(CliDocs, EveryExitStatusMentionedIsInTheTable) {
  std::string unknown;
  for (const auto& [verb, help] : VerbHelps())
    for (int code : ExitStatusesMentioned(help))
      if (!launcher::IsExitStatusOf(code, verb))
        unknown += "  `qlaunch " + verb + " --help`: exit status " + std::to_string(code) + "\n";
  std::vector<std::string> docs = {"README.md"};
  for (const auto& e : std::filesystem::directory_iterator(std::string(QLAUNCH_SOURCE_DIR) + "/docs"))
    if (e.path().extension() == ".md") docs.push_back("docs/" + e.path().filename().string());
  for (const std::string& doc : docs)
    for (int code : ExitStatusesMentioned(Doc(doc))) {
      bool any = false;
      for (const launcher::ExitStatusInfo& e : launcher::ExitStatuses()) any |= e.code == code;
      if (!any) unknown += "  " + doc + ": exit status " + std::to_string(code) + "\n";
    }
  EXPECT_EQ(unknown, "") << "exit statuses the table (launcher/cli/reference.cc) does not list for that command:\n"
                         << unknown;
  // The mentions are found at all (the pattern is not blind).
  EXPECT_FALSE(ExitStatusesMentioned(VerbHelps().at("detach-device")).empty());
}

TEST(CliDocs, TopHelpListsEveryVerbAndTheTables) {
  const RunResult top = RunQlaunch({"--help"});
  ASSERT_EQ(top.exit_code, 0) << top.Describe();
  for (const launcher::VerbInfo& v : AllVerbs())
    EXPECT_TRUE(std::regex_search(top.out, std::regex("\n    " + Escaped(v.name) + " +" + Escaped(v.summary) + "\n")))
        << v.name;
  EXPECT_NE(top.out.find(launcher::ReferenceHelp()), std::string::npos) << top.out;
  // One line a verb, not every verb's description: short (it was 237 lines).
  EXPECT_LT(std::count(top.out.begin(), top.out.end(), '\n'), 100) << top.out;
}

TEST(CliDocs, ReadmeNamesEveryVerb) {
  const std::string readme = Doc("README.md");
  std::string missing;
  for (const launcher::VerbInfo& v : AllVerbs())
    if (!NamesVerb(readme, v.name)) missing += std::string(" ") + v.name;
  EXPECT_EQ(missing, "") << "README.md does not name:" << missing;
}

// The man page the build wrote (scripts/make-manpage) holds the tables of the binary's --help.
TEST(CliDocs, ManPageHoldsTheTables) {
  const std::string page = std::string(QLAUNCH_BINARY_DIR) + "/qlaunch.1.gz";
  ASSERT_TRUE(std::filesystem::exists(page)) << page << " was not built (target qlaunch_docs)";
  FILE* p = popen(("gzip -dc '" + page + "'").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string roff;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) roff.append(buf, n);
  pclose(p);
  for (const char* section : {".SH EXIT STATUS\n", ".SH ENVIRONMENT\n", ".SH FILES\n"})
    EXPECT_NE(roff.find(section), std::string::npos) << section;
  for (const launcher::ExitStatusInfo& e : launcher::ExitStatuses()) {
    const std::string meaning = *e.verb ? std::string(e.verb) + ": " + e.meaning : std::string(e.meaning);
    EXPECT_NE(roff.find(".TP\n.B " + std::to_string(e.code) + "\n" + meaning + "\n"), std::string::npos) << meaning;
  }
  for (const launcher::EnvironmentInfo& e : launcher::EnvironmentVariables())
    EXPECT_NE(roff.find(std::string(".TP\n.B ") + e.name + "\n" + e.meaning + "\n"), std::string::npos) << e.name;
  for (const launcher::FileInfo& f : launcher::StateFiles())
    EXPECT_NE(roff.find(std::string(".TP\n.I ") + f.path + "\n" + f.meaning + "\n"), std::string::npos) << f.path;
  for (const launcher::VerbInfo& v : AllVerbs())
    EXPECT_NE(roff.find(std::string(".SS ") + v.name + "\n"), std::string::npos) << v.name;
}

}  // namespace
}  // namespace qlaunch::testing
