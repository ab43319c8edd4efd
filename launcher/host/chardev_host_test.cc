#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launcher/host/device_host.h"
#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

domain::CharDev UnixChr(std::string kind, std::string mode, std::string path, std::string name) {
  domain::CharDev c;
  c.kind = std::move(kind);
  c.type = "unix";
  c.mode = std::move(mode);
  c.path = std::move(path);
  c.target_type = c.kind == "channel" ? "virtio" : "isa-serial";
  c.target_name = std::move(name);
  c.line = 9;
  return c;
}

bool Connects(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

struct Fixture {
  testing::TempDir tmp{"qlaunch-chardev-host"};
  domain::DomainDef def;
  QemuUser user;
  DeviceHostContext ctx;
  Fixture() {
    def.name = "vm1";
    def.file = "vm1.xml";
    ctx.def = &def;
    ctx.state_root = tmp.path;
    ctx.domain_dir = tmp.path / "vm1";
    ctx.user = &user;
    fs::create_directory(ctx.domain_dir);
  }
};

TEST(ChardevHost, MakesTheListeningSocketsAndUndoRemovesThem) {
  Fixture f;
  const std::string given = (f.tmp.path / "serial.sock").string();
  f.def.devices.chardevs = {UnixChr("channel", "bind", "", "org.qemu.guest_agent.0"),
                            UnixChr("serial", "connect", "/nowhere/x.sock", ""),  // QEMU connects: nothing to make
                            UnixChr("serial", "bind", given, "")};
  auto part = MakeChardevHost();
  qemu::DeviceResources res;
  FdNumbers fds;
  part->Plan(f.ctx, &res, &fds);
  EXPECT_EQ(fds.count(), 2u);
  EXPECT_EQ(res.chardev_fds, (std::map<size_t, int>{{0, 0}, {2, 1}}));
  EXPECT_EQ(res.channel_dir, (f.ctx.domain_dir / "channel").string());
  EXPECT_FALSE(fs::exists(res.channel_dir)) << "Plan changes nothing";

  std::map<int, int> placed;
  part->Create(f.ctx, [&](int index, int fd) { placed[index] = ::dup(fd); });
  ASSERT_EQ(placed.size(), 2u);
  const std::string agent = res.channel_dir + "/org.qemu.guest_agent.0";
  struct stat st {};
  ASSERT_EQ(::stat(agent.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(Connects(agent));  // the handed-over fd is listening
  EXPECT_TRUE(Connects(given));
  nlohmann::json summary = nlohmann::json::object();
  part->Summary(&summary);
  EXPECT_EQ(summary["chardev_sockets"], nlohmann::json::array({agent, given}));

  for (auto& [index, fd] : placed) ::close(fd);
  part->Undo();
  EXPECT_FALSE(fs::exists(agent));
  EXPECT_FALSE(fs::exists(given));
  EXPECT_FALSE(fs::exists(res.channel_dir));
}

TEST(ChardevHost, RefusesWhatItCannotMake) {
  Fixture f;
  const fs::path file = f.tmp.path / "plain-file";
  { std::ofstream(file) << "x"; }
  const std::vector<domain::CharDev> bad = {
      UnixChr("serial", "bind", file.string(), ""),                       // not a socket: kept
      UnixChr("serial", "bind", (f.tmp.path / "no/dir.sock").string(), ""),  // no such directory
      UnixChr("serial", "bind", "/tmp/" + std::string(120, 'x'), ""),       // longer than sun_path
  };
  for (const auto& c : bad) {
    f.def.devices.chardevs = {c};
    auto part = MakeChardevHost();
    qemu::DeviceResources res;
    FdNumbers fds;
    EXPECT_THROW(part->Plan(f.ctx, &res, &fds), std::exception) << c.path;
  }
  EXPECT_TRUE(fs::exists(file));
}

}  // namespace
}  // namespace qlaunch::launcher
