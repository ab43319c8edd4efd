#include "launcher/lifecycle/move/migrate_ssh.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

using Argv = std::vector<std::string>;

TEST(MigrateSsh, ArgvFromTheUriAndTheOptions) {
  struct Case {
    const char* uri;
    Argv ssh_options;
    const char* identity;
    const char* migrate_host;
    const char* ssh;
    Argv want;
  } cases[] = {
      {"ssh://dest", {}, "", "", "ssh", {"ssh", "-o", "BatchMode=yes", "--", "dest", "CMD"}},
      {"ssh://root@10.0.0.2:2222", {}, "", "", "ssh",
       {"ssh", "-p", "2222", "-l", "root", "-o", "BatchMode=yes", "--", "10.0.0.2", "CMD"}},
      {"ssh://me@[fe80::1]:22/", {}, "", "", "ssh",
       {"ssh", "-p", "22", "-l", "me", "-o", "BatchMode=yes", "--", "fe80::1", "CMD"}},
      {"ssh://root@127.0.0.1:2200", {"StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"}, "/tmp/k", "", "ssh",
       {"ssh", "-p", "2200", "-l", "root", "-i", "/tmp/k", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
        "UserKnownHostsFile=/dev/null", "--", "127.0.0.1", "CMD"}},
      // --migrate-host changes where QEMU connects, never where ssh goes.
      {"ssh://alias", {}, "", "10.1.1.1", "/usr/bin/ssh", {"/usr/bin/ssh", "-o", "BatchMode=yes", "--", "alias", "CMD"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.uri);
    SshMigrateOptions o;
    o.ssh_options = c.ssh_options;
    o.identity = c.identity;
    o.migrate_host = c.migrate_host;
    o.ssh = c.ssh;
    EXPECT_EQ(SshArgv(ParseMigrationUri(c.uri, UriUse::kMigrate, "/"), o, "CMD"), c.want);
  }
}

TEST(MigrateSsh, RemoteCommandLines) {
  SshMigrateOptions o;
  EXPECT_EQ(RemoteStartCommand(o, "dest"), "qlaunch start --incoming tcp:0.0.0.0:0 --json -");
  EXPECT_EQ(RemoteStartCommand(o, "fe80::1"), "qlaunch start --incoming tcp:[::]:0 --json -");
  EXPECT_EQ(RemoteDestroyCommand(o, "vm1"), "qlaunch destroy vm1");
  o.remote_qlaunch = "env QLAUNCH_STATE_DIR=/x /b/qlaunch";
  EXPECT_EQ(RemoteStartCommand(o, "127.0.0.1"), "env QLAUNCH_STATE_DIR=/x /b/qlaunch start --incoming tcp:0.0.0.0:0 --json -");
  // A domain name is any string without '/': the remote shell gets it back as one word.
  EXPECT_EQ(RemoteDestroyCommand(o, "my vm;rm"), "env QLAUNCH_STATE_DIR=/x /b/qlaunch destroy 'my vm;rm'");
  EXPECT_EQ(RemoteDominfoCommand(o, "my vm"), "env QLAUNCH_STATE_DIR=/x /b/qlaunch dominfo --json 'my vm'");
}

// The confirm: only a dominfo that ran and says the state the source had lets the source go.
TEST(MigrateSsh, TheDestinationConfirmsOnlyWithTheGuestInTheSourcesState) {
  struct Case {
    int status;
    const char* out;
    const char* err;
    const char* want;
    const char* why;  // "" = confirmed
  } cases[] = {
      {0, R"({"name":"vm","state":"running"})", "", "running", ""},
      {0, R"({"name":"vm","state":"paused"})", "", "paused", ""},
      {0, R"({"name":"vm","state":"paused"})", "", "running", "it is paused, not running"},
      {0, R"({"name":"vm","state":"incoming"})", "", "running", "it is incoming, not running"},
      {0, R"({"name":"vm"})", "", "running", "it is in no state, not running"},
      {0, "garbage", "", "running", "its dominfo printed no JSON: garbage"},
      {1, "", "qlaunch: domain vm is not running\n", "running",
       "its dominfo exited 1: qlaunch: domain vm is not running"},
      {255, "", "ssh: connect to host dest port 22: Connection refused\n", "running",
       "ssh failed: ssh: connect to host dest port 22: Connection refused"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.out) + c.err);
    EXPECT_EQ(DestinationHasGuest(c.status, c.out, c.err, c.want), c.why);
  }
}

TEST(MigrateSsh, ConnectUriFromWhatTheDestinationReported) {
  const MigrationUri uri = ParseMigrationUri("ssh://root@dest:2222", UriUse::kMigrate, "/");
  EXPECT_EQ(ConnectHost(uri, {}), "dest");
  SshMigrateOptions o;
  o.migrate_host = "10.0.0.9";
  EXPECT_EQ(ConnectHost(uri, o), "10.0.0.9");
  EXPECT_EQ(ConnectUri("dest", "tcp:0.0.0.0:49152"), "tcp:dest:49152");
  EXPECT_EQ(ConnectUri("fe80::1", "tcp:[::]:40000"), "tcp:[fe80::1]:40000");
  EXPECT_THROW(ConnectUri("dest", "unix:/run/m.sock"), std::runtime_error);
  EXPECT_THROW(ConnectUri("dest", "tcp:0.0.0.0:0"), std::runtime_error);
  EXPECT_THROW(ConnectUri("dest", "garbage"), std::runtime_error);
}

}  // namespace
}  // namespace qlaunch::launcher
