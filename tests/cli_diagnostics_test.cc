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
// The copy lies in a directory of this process, removed at its exit.
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
const CopyDir kCopyDir;
const std::string kXml = WithoutKvmWhereMissing(
    std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/virtinst/unsupported/q35-filesystem-tpm-smartcard.xml",
    kCopyDir.path);

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
    EXPECT_TRUE(std::regex_search(line, std::regex("^" + kXml + ":[0-9]+: warning: <[a-z]+>: "))) << line;
  }
  EXPECT_TRUE(w.contains(kXml + ":55: warning: <filesystem>: element not supported by qlaunch, ignored")) << r.err;
  EXPECT_TRUE(w.contains(kXml + ":70: warning: <tpm>: element not supported by qlaunch, ignored")) << r.err;
}

TEST(CliDiagnostics, DomxmlToNativeReportsEachUnsupportedElementOnce) {
  ExpectEachWarningOnce({"domxml-to-native", kXml});
  ExpectEachWarningOnce({"domxml-to-native", "--format", "json", kXml});
}

TEST(CliDiagnostics, ValidateReportsEachUnsupportedElementOnce) { ExpectEachWarningOnce({"validate", kXml}); }

}  // namespace
}  // namespace qlaunch::testing
