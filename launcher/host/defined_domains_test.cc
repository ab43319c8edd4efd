#include "launcher/host/defined_domains.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

class DefinedDomainsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qlaunch-defined-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    parent_ = tmpl;
  }
  void TearDown() override { fs::remove_all(parent_); }
  fs::path parent_;
};

TEST_F(DefinedDomainsTest, WritesReadsListsAndRemovesRootOnly) {
  DefinedDomains d(parent_ / "etc" / "domains");
  EXPECT_TRUE(d.Names().empty());  // no root yet
  d.WithLock([&] {
    d.Write("vm-b", "<domain>b</domain>\n");
    d.Write("vm-a", "<domain>a</domain>\n");
  });
  EXPECT_EQ(d.Names(), (std::vector<std::string>{"vm-a", "vm-b"}));
  EXPECT_EQ(d.Read("vm-a"), "<domain>a</domain>\n");
  struct stat st {};
  ASSERT_EQ(::stat(d.root().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(d.FileOf("vm-a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  // Overwritten whole, no temporary file left beside it.
  d.WithLock([&] { d.Write("vm-a", "<domain>a2</domain>\n"); });
  EXPECT_EQ(d.Read("vm-a"), "<domain>a2</domain>\n");
  for (const auto& e : fs::directory_iterator(d.root()))
    EXPECT_FALSE(e.path().filename().string().ends_with(".tmp")) << e.path();
  d.WithLock([&] { d.Remove("vm-a"); });
  EXPECT_FALSE(d.IsDefined("vm-a"));
  EXPECT_EQ(d.Names(), (std::vector<std::string>{"vm-b"}));
}

TEST_F(DefinedDomainsTest, IgnoresWhatIsNoDefinition) {
  DefinedDomains d(parent_);
  std::ofstream(parent_ / ".vm.xml.tmp") << "half";
  std::ofstream(parent_ / "notes.txt") << "x";
  std::ofstream(parent_ / ".xml") << "x";
  fs::create_directory(parent_ / "dir.xml");
  std::ofstream(parent_ / "vm.xml") << "<domain/>";
  EXPECT_EQ(d.Names(), (std::vector<std::string>{"vm"}));
}

TEST_F(DefinedDomainsTest, UnknownNamesAndBadNamesAreRefused) {
  DefinedDomains d(parent_);
  try {
    d.Read("nosuch");
    FAIL() << "no error";
  } catch (const NotDefinedError& e) {
    EXPECT_EQ(std::string(e.what()), "domain 'nosuch' is not defined (no " + (parent_ / "nosuch.xml").string() + ")");
  }
  EXPECT_THROW(d.WithLock([&] { d.Remove("nosuch"); }), NotDefinedError);
  EXPECT_THROW(d.WithLock([&] { d.SetAutostart("nosuch", true); }), NotDefinedError);
  EXPECT_THROW(d.FileOf("../etc/passwd"), std::invalid_argument);
  EXPECT_THROW(d.FileOf(".hidden"), std::invalid_argument);
}

TEST_F(DefinedDomainsTest, AutostartIsALinkThatGoesWithTheDefinition) {
  DefinedDomains d(parent_);
  d.WithLock([&] { d.Write("vm", "<domain/>"); });
  EXPECT_FALSE(d.Autostart("vm"));
  d.WithLock([&] { d.SetAutostart("vm", true); });
  d.WithLock([&] { d.SetAutostart("vm", true); });  // twice is once
  EXPECT_TRUE(d.Autostart("vm"));
  EXPECT_EQ(fs::read_symlink(parent_ / "autostart" / "vm.xml"), fs::path("../vm.xml"));
  d.WithLock([&] { d.SetAutostart("vm", false); });
  EXPECT_FALSE(d.Autostart("vm"));
  d.WithLock([&] { d.SetAutostart("vm", true); });
  d.WithLock([&] { d.Remove("vm"); });
  EXPECT_FALSE(fs::exists(fs::symlink_status(parent_ / "autostart" / "vm.xml")));
}

}  // namespace
}  // namespace qlaunch::launcher
