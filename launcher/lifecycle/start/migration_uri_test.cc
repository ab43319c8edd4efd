#include "launcher/lifecycle/start/migration_uri.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

using K = MigrationUri::Kind;

TEST(MigrationUri, GoodUrisAsQemuTakesThem) {
  struct Case {
    const char* text;
    UriUse use;
    K kind;
    const char* qemu;  // ForQemu(), "" for ssh
    const char* host;
    int port;
    const char* user;
  } cases[] = {
      {"tcp:127.0.0.1:4444", UriUse::kMigrate, K::kTcp, "tcp:127.0.0.1:4444", "127.0.0.1", 4444, ""},
      {"tcp:0.0.0.0:0", UriUse::kIncoming, K::kTcp, "tcp:0.0.0.0:0", "0.0.0.0", 0, ""},
      {"tcp:[::1]:5000", UriUse::kMigrate, K::kTcp, "tcp:[::1]:5000", "::1", 5000, ""},
      {"tcp:dest.example:49152", UriUse::kMigrate, K::kTcp, "tcp:dest.example:49152", "dest.example", 49152, ""},
      {"unix:/run/m.sock", UriUse::kIncoming, K::kUnix, "unix:/run/m.sock", "", 0, ""},
      {"unix:rel/m.sock", UriUse::kMigrate, K::kUnix, "unix:/work/rel/m.sock", "", 0, ""},
      {"ssh://dest", UriUse::kMigrate, K::kSsh, "", "dest", 0, ""},
      {"ssh://root@10.0.0.2:2222", UriUse::kMigrate, K::kSsh, "", "10.0.0.2", 2222, "root"},
      {"ssh://me@[fe80::1]:22/", UriUse::kMigrate, K::kSsh, "", "fe80::1", 22, "me"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    MigrationUri u = ParseMigrationUri(c.text, c.use, "/work");
    EXPECT_EQ(u.kind, c.kind);
    if (c.kind != K::kSsh) {
      EXPECT_EQ(u.ForQemu(), c.qemu);
    }
    if (c.kind != K::kUnix) {
      EXPECT_EQ(u.host, c.host);
      EXPECT_EQ(u.port, c.port);
    }
    EXPECT_EQ(u.user, c.user);
  }
}

TEST(MigrationUri, BadUrisSayWhy) {
  struct Case {
    const char* text;
    UriUse use;
    const char* why;
  } cases[] = {
      {"tcp:host", UriUse::kMigrate, "no port"},
      {"tcp::4444", UriUse::kMigrate, "no host"},
      {"tcp:host:0", UriUse::kMigrate, "port 0 names no destination"},
      {"tcp:host:70000", UriUse::kIncoming, "port '70000' is not a number 0-65535"},
      {"tcp:host:44a", UriUse::kIncoming, "port '44a' is not a number"},
      {"tcp:::1:4444", UriUse::kIncoming, "an IPv6 address must be written in brackets"},
      {"tcp:[::1:4444", UriUse::kIncoming, "without its closing ']'"},
      {"unix:", UriUse::kIncoming, "no socket path"},
      {"ssh://dest", UriUse::kIncoming, "unknown transport"},
      {"ssh://@dest", UriUse::kMigrate, "an empty user"},
      {"ssh://dest/system", UriUse::kMigrate, "a path after the host"},
      {"qemu+ssh://dest/system", UriUse::kMigrate, "unknown transport"},
      {"exec:cat", UriUse::kMigrate, "unknown transport"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      ParseMigrationUri(c.text, c.use, "/");
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("'") + c.text + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.why), std::string::npos) << msg;
      EXPECT_EQ(msg.find("or ssh://[USER@]") != std::string::npos, c.use == UriUse::kMigrate) << msg;
    }
  }
}

}  // namespace
}  // namespace qlaunch::launcher
