// The fixture of the defined-domain tests (tests/define_test.cc, tests/define_edit_test.cc): a
// LaunchTest with its own QLAUNCH_CONFIG_DIR and $TMPDIR for edit's copies, small TCG domains of
// plain RAM, qlaunch run on a terminal (a pty) for edit's questions, and the checks after.
#pragma once

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/launch_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {

class DefineTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    std::filesystem::create_directories(tmp() / "edit");
  }

  std::filesystem::path ConfigDir() const { return tmp() / "config"; }

  // qlaunch with this test's definitions (and the edit copies in <tmp>/edit).
  RunResult Q(const std::vector<std::string>& args, Env extra = {}) {
    extra["QLAUNCH_CONFIG_DIR"] = ConfigDir().string();
    extra["TMPDIR"] = (tmp() / "edit").string();
    extra.emplace("VISUAL", "");  // $VISUAL comes before $EDITOR: none unless a test sets it
    return Qlaunch(args, extra);
  }

  // qlaunch ARGS on a terminal (a pty for its standard input, output and error), typing the next
  // of `answers` at each "[y/n]: " prompt. Its exit status and everything it wrote.
  std::pair<int, std::string> OnTerminal(const std::vector<std::string>& args, Env extra,
                                         const std::vector<std::string>& answers);

  // A small TCG domain of plain RAM, written to <tmp>/<name>.xml.
  std::string Xml(const std::string& name, unsigned mib = 64, const std::string& head = "") {
    const std::filesystem::path f = tmp() / (name + ".xml");
    std::ofstream(f) << "<domain type='qemu'>\n  <name>" << name << "</name>\n" << head
                     << "  <memory unit='MiB'>" << mib << "</memory>\n  <vcpu>1</vcpu>\n"
                     << "  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n  <features><acpi/></features>\n"
                     << "  <devices>\n    <emulator>" << kQemu72 << "</emulator>\n"
                     << "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    return f.string();
  }

  nlohmann::json ListAll() {
    RunResult r = Q({"list", "--all", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return nlohmann::json::parse(r.out, nullptr, false);
  }
  // The entry of `name` in `list --all --json`; null when not listed.
  nlohmann::json Entry(const std::string& name) {
    for (const nlohmann::json& e : ListAll())
      if (e.value("name", "") == name) return e;
    return nullptr;
  }

  // Every file in the config dir (names relative to it), hidden ones included.
  std::set<std::string> ConfigFiles() {
    std::set<std::string> out;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(ConfigDir(), ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec))
      out.insert(std::filesystem::relative(it->path(), ConfigDir()).string());
    return out;
  }

  // The domain's QEMU (when known) is gone and reaped, its state entry too, and nothing runs on
  // our state root. (Its memory is plain RAM: the machine-wide hugepage pool, which other tests
  // size meanwhile, is not its business.)
  void ExpectGone(const std::string& name, pid_t qemu = 0) {
    if (qemu > 0) ExpectQemuGone(qemu);
    EXPECT_FALSE(std::filesystem::exists(DomainStateDir(name))) << name;
    EXPECT_TRUE(LivePidsWithCmdline(StateDir().string()).empty());
    EXPECT_TRUE(LiveChildren().empty());
  }

  // An $EDITOR: a shell script running `body` on its file "$1".
  std::string Editor(const std::string& name, const std::string& body) {
    const std::filesystem::path f = tmp() / name;
    std::ofstream(f) << "#!/bin/sh\nset -e\n" << body << "\n";
    std::filesystem::permissions(f, std::filesystem::perms::owner_all);
    return f.string();
  }
};

}  // namespace qlaunch::testing
