// qlaunch edit with a scripted $EDITOR on real definitions (no QEMU runs): a good edit kept whole,
// a bad one (XML that does not parse, a rename, a failing editor) refused with the copy's file and
// line and the definition byte for byte as it was; on a terminal (a pty) the edit offered again as
// `virsh edit` offers it; a definition changed meanwhile not overwritten.
#include <regex>

#include "support/define_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(DefineTest, EditKeepsAGoodEditAndRefusesABadOne) {
  const std::string name = "qldef-edit";
  ASSERT_EQ(Q({"define", Xml(name)}).exit_code, 0);
  const fs::path file = ConfigDir() / (name + ".xml");
  const std::string before = Slurp(file);

  // Nothing changed, the editor failed, the edit renames: the definition stays as it was.
  RunResult r = Q({"edit", name}, {{"EDITOR", "true"}, {"VISUAL", ""}});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "Domain '" + name + "' XML configuration not changed.\n");
  r = Q({"edit", name}, {{"EDITOR", "false"}, {"VISUAL", ""}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("the editor 'false' failed (status 1)"), std::string::npos) << r.err;
  r = Q({"edit", name}, {{"EDITOR", Editor("rename", "sed -i 's/<name>qldef-edit</<name>qldef-renamed</' \"$1\"")}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(":2: error: <name>: the edit renames domain 'qldef-edit' to 'qldef-renamed'"), std::string::npos)
      << r.err;
  EXPECT_EQ(Slurp(file), before);

  // A bad edit: the reasons with the copy's file and line, no terminal to offer it again, so it
  // fails and keeps the copy; the definition is byte for byte what it was.
  r = Q({"edit", name}, {{"EDITOR", Editor("break", "sed -i 's#</memory>#</memroy>#' \"$1\"")}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  std::smatch copy;
  ASSERT_TRUE(std::regex_search(r.err, copy, std::regex("(/\\S*/qlaunch-edit-qldef-edit-\\w+\\.xml):4: error"))) << r.err;
  EXPECT_NE(r.err.find("qlaunch: error: edit: the edited XML does not validate: domain 'qldef-edit' is unchanged"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no terminal to offer the edit again; the edit is kept in " + copy[1].str()), std::string::npos)
      << r.err;
  EXPECT_NE(Slurp(copy[1].str()).find("</memroy>"), std::string::npos);
  EXPECT_EQ(Slurp(file), before);
  EXPECT_EQ(Q({"dumpxml", "--inactive", name}).out, before);

  // A good edit (VISUAL before EDITOR, as virsh): kept whole, its copy removed.
  fs::remove_all(tmp() / "edit");
  fs::create_directories(tmp() / "edit");
  r = Q({"edit", name}, {{"VISUAL", Editor("grow", "sed -i 's#>64</memory>#>96</memory>#' \"$1\"")}, {"EDITOR", "false"}});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "Domain '" + name + "' XML configuration edited.\n");
  EXPECT_EQ(Slurp(file), std::regex_replace(before, std::regex(">64</memory>"), ">96</memory>"));
  EXPECT_EQ(Entry(name)["memory_bytes"], 96u << 20);
  EXPECT_TRUE(fs::is_empty(tmp() / "edit"));
  EXPECT_EQ(ConfigFiles(), (std::set<std::string>{".lock", name + ".xml"}));
}

// On a terminal, as `virsh edit`: a bad edit is offered again; "y" opens the editor on the copy
// once more (here it fixes it: kept), "n" gives up (the definition as it was, the copy removed).
TEST_F(DefineTest, OnATerminalABadEditIsOfferedAgain) {
  const std::string name = "qldef-tty";
  ASSERT_EQ(Q({"define", Xml(name)}).exit_code, 0);
  const fs::path file = ConfigDir() / (name + ".xml");
  const std::string before = Slurp(file);
  // Breaks the XML on its first run, mends it (and grows the memory) on its second.
  const std::string count = (tmp() / "runs").string();
  const std::string editor = Editor(
      "twice", "echo x >> " + count + "\nif [ $(wc -l < " + count + ") = 1 ]; then sed -i 's#</memory>#</memroy>#' \"$1\"; " +
                   "else sed -i 's#>64</memroy>#>80</memory>#' \"$1\"; fi");
  auto [code, out] = OnTerminal({"edit", name}, {{"EDITOR", editor}}, {"y"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find(":4: error"), std::string::npos) << out;
  EXPECT_NE(out.find("Failed. Edit again? [y/n]: "), std::string::npos) << out;
  EXPECT_NE(out.find("Domain '" + name + "' XML configuration edited."), std::string::npos) << out;
  EXPECT_EQ(Slurp(count), "x\nx\n");
  const std::string grown = std::regex_replace(before, std::regex(">64</memory>"), ">80</memory>");
  EXPECT_EQ(Slurp(file), grown);
  EXPECT_TRUE(fs::is_empty(tmp() / "edit"));

  fs::remove(count);
  std::tie(code, out) = OnTerminal({"edit", name}, {{"EDITOR", editor}}, {"n"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("Failed. Edit again? [y/n]: "), std::string::npos) << out;
  EXPECT_EQ(Slurp(count), "x\n");  // not opened again
  EXPECT_EQ(Slurp(file), grown);
  EXPECT_TRUE(fs::is_empty(tmp() / "edit"));

  // Someone else changes the definition while it is edited: the edit is not saved over it.
  const std::string other = std::regex_replace(grown, std::regex(">80</memory>"), ">72</memory>");
  std::ofstream(tmp() / "other.xml") << other;
  const std::string racing = Editor(
      "racing", "sed -i 's#>80</memory>#>88</memory>#' \"$1\"; cp " + (tmp() / "other.xml").string() + " " + file.string());
  RunResult r = Q({"edit", name}, {{"EDITOR", racing}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("was changed by someone else while it was edited"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the edit is kept in " + (tmp() / "edit").string()), std::string::npos) << r.err;
  EXPECT_EQ(Slurp(file), other);
}

}  // namespace
}  // namespace qlaunch::testing
