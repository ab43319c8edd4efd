#include "launcher/lifecycle/start/migration_settings.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

using nlohmann::json;

// Every capability a migration depends on is named, off as well as on: a QEMU keeps what an
// earlier migration set (issue 34: a save from a QEMU that came in by `migrate --local` carried
// no RAM, x-ignore-shared having stayed on).
TEST(MigrationSettings, EveryCapabilityIsNamedOnOrOff) {
  auto states = [](const MigrationSettings& s) {
    json by_name = json::object();
    for (const json& c : MigrationCapabilities(s)) by_name[c.at("capability").get<std::string>()] = c.at("state");
    return by_name;
  };
  EXPECT_EQ(states({}), json({{"events", true}, {"x-ignore-shared", false}, {"return-path", false}}));
  MigrationSettings local;
  local.ignore_shared = local.return_path = true;
  EXPECT_EQ(states(local), json({{"events", true}, {"x-ignore-shared", true}, {"return-path", true}}));
}

}  // namespace
}  // namespace qlaunch::launcher
