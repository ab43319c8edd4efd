// What the commands print about a domain XML written by a real client (virt-install): every
// unsupported element is reported once, with file and line, by each command that reads it.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "support/hardware.h"
#include "support/qlaunch_run.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

// Written by virt-install with devices qlaunch does not start (tests/fixtures/virtinst/generate).
// Not a test of the accelerator: where KVM is missing, its TCG copy (the same lines).
// Where KVM is missing, the copy lies in a directory made by the first test that asks for it
// and removed at this process's exit (every process of the test binary would leave one behind
// if it were made at start-up, and a killed one did).
struct CopyDir {
  std::string path;
  CopyDir() {
    std::string tmpl = ::testing::TempDir() + "/qlaunch-cli-diagnostics.XXXXXX";
    if (::mkdtemp(tmpl.data())) path = tmpl;
  }
  ~CopyDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};
const std::string& Xml() {
  static const std::string src =
      std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/virtinst/unsupported/q35-filesystem-tpm-smartcard.xml";
  if (MissingHardware("kvm").empty()) return src;
  static const CopyDir dir;
  static const std::string copy = WithoutKvmWhereMissing(src, dir.path);
  return copy;
}

// Each "FILE:LINE: warning: ..." line of stderr with how often it appears.
std::map<std::string, int> Warnings(const std::string& err) {
  std::map<std::string, int> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.find(": warning: ") != std::string::npos) ++out[line];
  return out;
}

void ExpectEachWarningOnce(const std::vector<std::string>& args) {
  RunResult r = RunQlaunch(args);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::map<std::string, int> w = Warnings(r.err);
  // virt-install's XML has a <filesystem>, a <smartcard>, a <tpm> and a balloon's <stats>, each
  // on its own line; every other element of it is understood.
  ASSERT_EQ(w.size(), 4u) << r.Describe();
  for (const auto& [line, n] : w) {
    EXPECT_EQ(n, 1) << "printed " << n << " times: " << line;
    EXPECT_TRUE(std::regex_search(line, std::regex("^" + Xml() + ":[0-9]+: warning: <[a-z]+>: "))) << line;
  }
  EXPECT_TRUE(w.contains(Xml() + ":55: warning: <filesystem>: element not supported by qlaunch, ignored")) << r.err;
  EXPECT_TRUE(w.contains(Xml() + ":70: warning: <tpm>: element not supported by qlaunch, ignored")) << r.err;
}

TEST(CliDiagnostics, DomxmlToNativeReportsEachUnsupportedElementOnce) {
  ExpectEachWarningOnce({"domxml-to-native", Xml()});
  ExpectEachWarningOnce({"domxml-to-native", "--format", "json", Xml()});
}

TEST(CliDiagnostics, ValidateReportsEachUnsupportedElementOnce) { ExpectEachWarningOnce({"validate", Xml()}); }

}  // namespace
}  // namespace qlaunch::testing
