#include "launcher/host/systemd_unit.h"

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

TEST(SystemdUnitTest, InstanceNamesAreEscapedAsSystemdEscapeDoes) {
  struct Case {
    const char* name;
    const char* instance;
  } cases[] = {
      {"vm1", "vm1"}, {"vm-1", "vm\\x2d1"}, {"a.b_c:d", "a.b_c:d"}, {".hidden", "\\x2ehidden"}, {"sp ace", "sp\\x20ace"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(UnitInstance(c.name), c.instance) << c.name;
    EXPECT_EQ(UnitName(c.name), std::string("qlaunch@") + c.instance + ".service");
  }
}

// The same as systemd's own tool says, where it is installed.
TEST(SystemdUnitTest, AgreesWithSystemdEscape) {
  if (!std::filesystem::exists("/usr/bin/systemd-escape")) GTEST_SKIP() << "no systemd-escape";
  for (const char* name : {"vm1", "vm-1", "a.b_c:d", "sp ace", "x+y"}) {
    const std::string cmd = std::string("/usr/bin/systemd-escape '") + name + "'";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[256] = {};
    const size_t n = std::fread(buf, 1, sizeof buf - 1, p);
    ::pclose(p);
    std::string out(buf, n);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    EXPECT_EQ(UnitInstance(name), out) << name;
  }
}

}  // namespace
}  // namespace qlaunch::launcher
