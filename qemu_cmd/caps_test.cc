#include "qemu_cmd/caps.h"
#include "support/build_paths.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace qlaunch::qemu {
namespace {

using json = nlohmann::json;

json ReadFixture(const std::string& name) {
  std::ifstream in(std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/caps/" + name);
  if (!in) throw std::runtime_error("missing fixture " + name);
  return json::parse(in);
}

class CapsFixtureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CapsFixtureTest, RoundTripsExactly) {
  json fixture = ReadFixture(GetParam());
  QemuCaps caps = fixture.get<QemuCaps>();
  EXPECT_EQ(json(caps), fixture);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CapsFixtureTest, ::testing::Values("qemu-7.2.json", "qemu-5.2.json"));

TEST(QemuCaps, FieldsFromFixture) {
  QemuCaps c = ReadFixture("qemu-7.2.json").get<QemuCaps>();
  EXPECT_EQ(c.binary, "/usr/bin/qemu-system-x86_64");
  EXPECT_EQ(c.major, 7);
  EXPECT_EQ(c.minor, 2);
  EXPECT_EQ(c.micro, 22);
  EXPECT_EQ(c.VersionString(), "7.2.22");
  EXPECT_TRUE(c.thread_context);
  EXPECT_TRUE(c.prealloc_context);
  QemuCaps old = ReadFixture("qemu-5.2.json").get<QemuCaps>();
  EXPECT_EQ(old.VersionString(), "5.2.0");
  EXPECT_FALSE(old.thread_context);
  EXPECT_FALSE(old.json_object);
  EXPECT_TRUE(old.prealloc_threads);
}

TEST(QemuCaps, VersionAtLeast) {
  QemuCaps c;
  c.major = 7;
  c.minor = 2;
  EXPECT_TRUE(c.VersionAtLeast(7, 2));
  EXPECT_TRUE(c.VersionAtLeast(6, 9));
  EXPECT_FALSE(c.VersionAtLeast(7, 3));
  EXPECT_FALSE(c.VersionAtLeast(8, 0));
}

TEST(QemuCaps, MissingFlagsReadAsUnsupported) {
  QemuCaps c = json::parse(R"({"version": {"major": 6, "minor": 1}})").get<QemuCaps>();
  EXPECT_EQ(c.VersionString(), "6.1.0");
  EXPECT_FALSE(c.thread_context);
  EXPECT_FALSE(c.memfd);
  EXPECT_FALSE(c.kvm);
  EXPECT_EQ(c.binary, "");
}

TEST(QemuCaps, MissingVersionIsRejected) {
  EXPECT_THROW(json::parse(R"({"binary": "/x", "memfd": true})").get<QemuCaps>(), json::exception);
  EXPECT_THROW(json::parse(R"({"version": {"major": "7", "minor": 2}})").get<QemuCaps>(), json::exception);
}

}  // namespace
}  // namespace qlaunch::qemu
