// The mistakes a new user makes on the command line, each made with the built qlaunch and with
// virsh 9.0 (`virsh -c test:///default`: its test driver, no daemon) side by side: what each
// prints and its exit status. qlaunch names what was wrong in its one error style
// ("qlaunch: error: [VERB: ]..."; what is wrong inside a file: "FILE[:LINE]: error: ..."), exits 2
// for a usage error and 1 for any other error (a file it cannot read), and never 0 for a
// mistake. The table is printed for the record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/libvirt.h"
#include "support/qlaunch_run.h"
#include "support/temp_dir.h"

namespace qlaunch::testing {
namespace {

struct Mistake {
  std::string what;
  std::vector<std::string> qlaunch;  // qlaunch's arguments
  int exit_code;                     // qlaunch's exit status
  std::string message;               // the line qlaunch prints on stderr (its start, up to the hint)
  std::vector<std::string> virsh;    // the same mistake in virsh (after -c test:///default); {}: none
  std::string shared;                // what both say (strerror and the like); "" when their words differ
};

// The first line of `text` that is not empty.
std::string FirstLine(const std::string& text) {
  size_t at = 0;
  while (at < text.size() && text[at] == '\n') ++at;
  return text.substr(at, text.find('\n', at) - at);
}

const std::string& VirshMissing() {
  static const std::string why =
      ::access(kVirsh, X_OK) == 0 ? "" : std::string(kVirsh) + " is missing (scripts/setup installs libvirt-clients)";
  return why;
}

RunResult VirshTest(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kVirsh, "-c", "test:///default"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunningProcess(argv, {}).Wait(std::chrono::seconds(30));
}

class CliMistakesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.path / "empty.xml").flush();
    std::filesystem::create_directories(dir_.path / "state");
    env_ = {{"QLAUNCH_STATE_DIR", (dir_.path / "state").string()}};  // nothing may touch /run/qlaunch
  }
  std::string In(const std::string& name) const { return (dir_.path / name).string(); }
  TempDir dir_{"qlaunch-cli-mistakes"};
  Env env_;
};

TEST_F(CliMistakesTest, EachMistakeIsNamedWithItsExitStatusBesideVirsh) {
  const std::string missing = In("missing.xml"), empty = In("empty.xml"), dir = dir_.path.string();
  const std::vector<Mistake> mistakes = {
      {"unknown verb", {"strat", "vm.xml"}, 2,
       "qlaunch: error: unknown command: 'strat' (did you mean 'start'?)", {"strat", "vm.xml"},
       "unknown command: 'strat'"},
      {"unknown verb with --help", {"strat", "--help"}, 2,
       "qlaunch: error: unknown command: 'strat' (did you mean 'start'?)", {"strat", "--help"},
       "unknown command: 'strat'"},
      {"help of an unknown verb", {"help", "strat"}, 2,
       "qlaunch: error: help: unknown command: 'strat' (did you mean 'start'?)", {"help", "strat"}, ""},
      {"missing file", {"start", missing}, 1, "qlaunch: error: start: cannot read " + missing + ": No such file or directory",
       {"create", missing}, std::strerror(ENOENT)},
      {"a directory", {"start", dir}, 1, "qlaunch: error: start: cannot read " + dir + ": Is a directory",
       {"create", dir}, std::strerror(EISDIR)},
      {"an empty file", {"start", empty}, 1, empty + ": error: file is empty; expected a libvirt <domain> XML document",
       {"create", empty}, ""},
      {"missing argument", {"start"}, 2, "qlaunch: error: start: missing DOMAIN.xml (see 'qlaunch start --help')",
       {"create"}, ""},
      {"unknown option", {"start", "--frob", "vm.xml"}, 2,
       "qlaunch: error: start: unknown option '--frob' (see 'qlaunch start --help')", {"create", "--frob", "vm.xml"},
       "--frob"},
      {"conflicting options", {"change-media", "vm1", "sda", "--eject", "--insert"}, 2,
       "qlaunch: error: change-media: --eject and --insert exclude each other (see 'qlaunch change-media --help')",
       {"change-media", "test", "hda", "--eject", "--insert"}, "--insert"},
      {"conflicting options", {"migrate", "vm1", "unix:/tmp/x.sock", "--local"}, 2,
       "qlaunch: error: migrate: --local takes no URI: the new QEMU runs on this host (see 'qlaunch migrate --help')",
       {}, ""},
      {"option without its value", {"prealloc", "--size"}, 2, "qlaunch: error: prealloc: --size", {}, ""},
      {"no command", {}, 2, "qlaunch: error: no command given (see 'qlaunch --help')", {}, ""},
  };
  std::string table = "\nmistake | qlaunch: exit, stderr | virsh -c test:///default: exit, stderr\n";
  for (const Mistake& m : mistakes) {
    SCOPED_TRACE(m.what);
    const RunResult q = RunQlaunch(m.qlaunch, env_);
    EXPECT_EQ(q.exit_code, m.exit_code) << q.Describe();
    EXPECT_EQ(FirstLine(q.err).substr(0, m.message.size()), m.message) << q.Describe();
    EXPECT_EQ(q.out, "") << "a mistake prints nothing on stdout: " << q.Describe();
    std::string virsh_side = "(no such mistake in virsh)";
    if (!m.virsh.empty() && !VirshMissing().empty()) {
      virsh_side = "(not run: " + VirshMissing() + ")";
    } else if (!m.virsh.empty()) {
      const RunResult v = VirshTest(m.virsh);
      // virsh refuses it too (it exits 1 for every error), and says the same where it can.
      EXPECT_NE(v.exit_code, 0) << v.Describe();
      if (!m.shared.empty()) {
        EXPECT_NE(v.err.find(m.shared), std::string::npos) << v.Describe();
        EXPECT_NE(q.err.find(m.shared), std::string::npos) << q.Describe();
      }
      virsh_side = std::to_string(v.exit_code) + ", " + FirstLine(v.err);
    }
    table += m.what + " | " + std::to_string(q.exit_code) + ", " + FirstLine(q.err) + " | " + virsh_side + "\n";
  }
  std::printf("%s", table.c_str());
}

TEST_F(CliMistakesTest, HelpVerbIsVerbHelpAsInVirsh) {
  for (const char* verb : {"start", "destroy", "suspend", "help", "completion"}) {
    SCOPED_TRACE(verb);
    const RunResult help = RunQlaunch({"help", verb}, env_), flag = RunQlaunch({verb, "--help"}, env_);
    EXPECT_EQ(help.exit_code, 0) << help.Describe();
    EXPECT_EQ(flag.exit_code, 0) << flag.Describe();
    EXPECT_EQ(help.out, flag.out);
    EXPECT_NE(help.out.find(std::string("\nUsage: qlaunch ") + verb + " "), std::string::npos) << help.out;
    EXPECT_NE(help.out.find("Exit status:"), std::string::npos) << help.out;
  }
  if (VirshMissing().empty()) {
    const RunResult v = VirshTest({"help", "start"});
    EXPECT_EQ(v.exit_code, 0) << v.Describe();
    EXPECT_NE(v.out.find("start - start a (previously defined) inactive domain"), std::string::npos) << v.out;
  }
  // `qlaunch help` alone and `qlaunch --help`: the commands.
  const RunResult all = RunQlaunch({"help"}, env_), flag = RunQlaunch({"--help"}, env_);
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_EQ(all.out, flag.out);
}

// Every verb that reads a domain XML: a file it cannot read is an error naming verb and file
// (exit 1), and "-" is standard input (here empty: said so, exit 1, nothing else tried).
TEST_F(CliMistakesTest, EveryVerbReadingADomainXmlChecksItAndTakesStdin) {
  const std::string missing = In("missing.xml");
  for (const char* verb : {"domxml-to-native", "validate", "start", "run", "bench"}) {
    SCOPED_TRACE(verb);
    const RunResult r = RunQlaunch({verb, missing}, env_);
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_EQ(FirstLine(r.err), std::string("qlaunch: error: ") + verb + ": cannot read " + missing +
                                    ": No such file or directory")
        << r.Describe();
    const RunResult in = RunQlaunch({verb, "-"}, env_);  // stdin is /dev/null
    EXPECT_EQ(in.exit_code, 1) << in.Describe();
    EXPECT_NE(in.err.find("<stdin>: no domain XML on standard input"), std::string::npos) << in.Describe();
  }
}

}  // namespace
}  // namespace qlaunch::testing
