#include "launcher/host/graphics_host.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

#include <nlohmann/json.hpp>

#include "tests/support/plan_fixtures.h"

namespace qlaunch::launcher {
namespace {

domain::Graphics Gfx(std::string type, std::optional<int> port, bool autoport, int line = 30) {
  domain::Graphics g;
  g.type = std::move(type);
  g.port = port;
  g.autoport = autoport;
  g.line = line;
  return g;
}

struct Result {
  qemu::DeviceResources res;
  nlohmann::json summary = nlohmann::json::object();
};

Result PlanWith(const domain::DomainDef& def, std::set<int> busy) {
  auto part = MakeGraphicsHost([busy](int port) { return !busy.count(port); });
  DeviceHostContext ctx;
  ctx.def = &def;
  Result r;
  FdNumbers fds;
  part->Plan(ctx, &r.res, &fds);
  part->Summary(&r.summary);
  EXPECT_EQ(fds.count(), 0u);
  return r;
}

TEST(GraphicsHost, AutoportTakesTheFirstFreePortFrom5900) {
  auto d = testing::MakeDomain();
  d.devices.graphics = {Gfx("vnc", std::nullopt, true), Gfx("spice", std::nullopt, true)};
  d.devices.graphics[1].listen = "0.0.0.0";
  Result r = PlanWith(d, {5900, 5902});
  EXPECT_EQ(r.res.graphics_ports, (std::map<size_t, int>{{0, 5901}, {1, 5903}}));
  EXPECT_EQ(r.summary, nlohmann::json::parse(R"({"graphics":[{"type":"vnc","listen":"127.0.0.1","port":5901},
                                                             {"type":"spice","listen":"0.0.0.0","port":5903}]})"));
}

TEST(GraphicsHost, AutoportSkipsTheDomainsOwnFixedPort) {
  auto d = testing::MakeDomain();
  d.devices.graphics = {Gfx("vnc", std::nullopt, true), Gfx("spice", 5900, false)};
  Result r = PlanWith(d, {});
  EXPECT_EQ(r.res.graphics_ports, (std::map<size_t, int>{{0, 5901}}));
}

TEST(GraphicsHost, FixedPortTakenIsAnErrorWithTheLine) {
  auto d = testing::MakeDomain();
  d.devices.graphics = {Gfx("vnc", 5905, false, 44)};
  EXPECT_TRUE(PlanWith(d, {5900}).res.graphics_ports.empty());
  try {
    PlanWith(d, {5905});
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().at(0).line, 44);
    EXPECT_EQ(e.diagnostics().at(0).element, "graphics");
    EXPECT_NE(e.diagnostics().at(0).message.find("5905"), std::string::npos);
  }
}

TEST(GraphicsHost, NoPortForListenNoneOrSpiceWithoutPort) {
  auto d = testing::MakeDomain();
  d.devices.graphics = {Gfx("vnc", std::nullopt, true), Gfx("spice", std::nullopt, false)};
  d.devices.graphics[0].listen_none = true;
  Result r = PlanWith(d, {});
  EXPECT_TRUE(r.res.graphics_ports.empty());
  EXPECT_EQ(r.summary["graphics"][0]["listen"], "none");
  EXPECT_EQ(r.summary["graphics"][1]["port"], 0);
}

TEST(GraphicsHost, NoGraphicsNoSummary) {
  Result r = PlanWith(testing::MakeDomain(), {});
  EXPECT_FALSE(r.summary.contains("graphics"));
}

TEST(TcpPortFree, SeesAListeningSocket) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  EXPECT_FALSE(TcpPortFree(ntohs(a.sin_port)));
  close(fd);
}

}  // namespace
}  // namespace qlaunch::launcher
