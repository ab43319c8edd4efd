#include "launcher/host/net_host.h"

#include <fcntl.h>
#include <net/if.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "launcher/host/device_host.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

domain::Interface NicOf(std::string type, int line) {
  domain::Interface n;
  n.type = std::move(type);
  n.model = "virtio";
  n.line = line;
  return n;
}

domain::DomainDef Domain(std::vector<domain::Interface> nics) {
  domain::DomainDef d;
  d.file = "n.xml";
  d.name = "hnet-test";
  d.uuid = "6c4f1a5e-1111-4c2e-9a3b-0123456789ab";
  d.devices.interfaces = std::move(nics);
  return d;
}

// Root (or CAP_NET_ADMIN) and a usable /dev/net/tun, else the reason to skip.
std::string TapSkipReason() {
  if (::geteuid() != 0) return "creating taps needs root or CAP_NET_ADMIN";
  int fd = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0) return "/dev/net/tun is not usable here";
  ::close(fd);
  return "";
}

DiagnosticError PlanError(const domain::DomainDef& def) {
  auto part = MakeNetHost();
  DeviceHostContext ctx;
  ctx.def = &def;
  qemu::DeviceResources res;
  FdNumbers fds;
  try {
    part->Plan(ctx, &res, &fds);
  } catch (const DiagnosticError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a plan error";
  return DiagnosticError(Diagnostic{});
}

TEST(TapMac, FirstOctetFe) {
  EXPECT_EQ(TapMac("52:54:00:aa:bb:cc"), "fe:54:00:aa:bb:cc");
}

TEST(NetHostPlan, UserNeedsNothing) {
  auto def = Domain({NicOf("user", 5), NicOf("user", 6)});
  auto part = MakeNetHost();
  DeviceHostContext ctx;
  ctx.def = &def;
  qemu::DeviceResources res;
  FdNumbers fds;
  part->Plan(ctx, &res, &fds);
  EXPECT_EQ(fds.count(), 0u);
  EXPECT_EQ(res.net_fds, (std::vector<int>{-1, -1}));
  nlohmann::json summary = nlohmann::json::object();
  part->Summary(&summary);
  ASSERT_EQ(summary["interfaces"].size(), 2u);
  EXPECT_EQ(summary["interfaces"][0]["type"], "user");
  EXPECT_EQ(summary["interfaces"][0]["tap"], "");
  EXPECT_EQ(summary["interfaces"][1]["mac"].get<std::string>().substr(0, 9), "52:54:00:");
}

TEST(NetHostPlan, MissingBridgeNamesFileLineAndBridge) {
  if (auto why = TapSkipReason(); !why.empty()) GTEST_SKIP() << why;
  auto nic = NicOf("bridge", 7);
  nic.source_bridge = "qlh-nobr9";
  auto def = Domain({NicOf("user", 5), nic});
  DiagnosticError e = PlanError(def);
  ASSERT_EQ(e.diagnostics().size(), 1u);
  const Diagnostic& d = e.diagnostics()[0];
  EXPECT_EQ(d.file, "n.xml");
  EXPECT_EQ(d.line, 7);
  EXPECT_EQ(d.element, "source");
  EXPECT_NE(d.message.find("bridge 'qlh-nobr9' does not exist"), std::string::npos) << d.message;
}

TEST(NetHostPlan, NotABridgeAndTapNamesInUse) {
  if (auto why = TapSkipReason(); !why.empty()) GTEST_SKIP() << why;
  auto not_bridge = NicOf("bridge", 7);
  not_bridge.source_bridge = "lo";
  auto taken = NicOf("ethernet", 8);
  taken.target_dev = "lo";  // exists: a managed tap may not take it
  taken.target_line = 9;
  auto missing = NicOf("ethernet", 10);
  missing.target_dev = "qlh-notap9";
  missing.target_managed = false;
  missing.target_line = 11;
  auto not_tap = NicOf("ethernet", 12);
  not_tap.target_dev = "lo";
  not_tap.target_managed = false;
  DiagnosticError e = PlanError(Domain({not_bridge, taken, missing}));
  ASSERT_EQ(e.diagnostics().size(), 3u);
  EXPECT_NE(e.diagnostics()[0].message.find("'lo' is not a bridge"), std::string::npos);
  EXPECT_EQ(e.diagnostics()[1].line, 9);
  EXPECT_NE(e.diagnostics()[1].message.find("already exists"), std::string::npos);
  EXPECT_EQ(e.diagnostics()[2].line, 11);
  EXPECT_NE(e.diagnostics()[2].message.find("does not exist"), std::string::npos);
  DiagnosticError e2 = PlanError(Domain({not_tap}));
  EXPECT_NE(e2.diagnostics().at(0).message.find("is not a tap"), std::string::npos);
}

// Creates real taps: a named one and a kernel-named one, placed like DeviceHostSide does;
// they are gone once the last fd is closed.
TEST(NetHostCreate, TapsLiveAsLongAsTheirFds) {
  if (auto why = TapSkipReason(); !why.empty()) GTEST_SKIP() << why;
  auto named = NicOf("ethernet", 5);
  named.target_dev = "qlh-t" + std::to_string(::getpid() % 100000);
  named.mac = "52:54:00:12:34:56";
  auto anon = NicOf("ethernet", 6);
  anon.model = "e1000";
  auto def = Domain({named, NicOf("user", 7), anon});
  auto part = MakeNetHost();
  DeviceHostContext ctx;
  ctx.def = &def;
  qemu::DeviceResources res;
  FdNumbers fds;
  part->Plan(ctx, &res, &fds);
  ASSERT_EQ(fds.count(), 2u);
  EXPECT_EQ(res.net_fds, (std::vector<int>{0, -1, 1}));
  std::vector<int> placed(2, -1);
  part->Create(ctx, [&](int index, int fd) { placed.at(index) = ::fcntl(fd, F_DUPFD_CLOEXEC, 3); });
  nlohmann::json summary = nlohmann::json::object();
  part->Summary(&summary);
  const std::string anon_name = summary["interfaces"][2]["tap"];
  EXPECT_EQ(summary["interfaces"][0]["tap"], named.target_dev);
  EXPECT_EQ(anon_name.rfind("vnet", 0), 0u) << anon_name;
  for (const std::string& name : {named.target_dev, anon_name}) {
    EXPECT_TRUE(fs::exists("/sys/class/net/" + name)) << name;
    std::ifstream flags("/sys/class/net/" + name + "/flags");
    unsigned long f = 0;
    flags >> std::hex >> f;
    EXPECT_TRUE(f & IFF_UP) << name;
  }
  std::ifstream addr("/sys/class/net/" + named.target_dev + "/address");
  std::string mac;
  addr >> mac;
  EXPECT_EQ(mac, "fe:54:00:12:34:56");
  std::ifstream tun_flags("/sys/class/net/" + named.target_dev + "/tun_flags");
  unsigned long tf = 0;
  tun_flags >> std::hex >> tf;
  EXPECT_TRUE(tf & 0x4000) << "IFF_VNET_HDR for virtio";
  part->Undo();
  for (int fd : placed) ::close(fd);
  EXPECT_FALSE(fs::exists("/sys/class/net/" + named.target_dev));
  EXPECT_FALSE(fs::exists("/sys/class/net/" + anon_name));
}

}  // namespace
}  // namespace qlaunch::launcher
