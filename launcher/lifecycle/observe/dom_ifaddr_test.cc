#include "launcher/lifecycle/observe/dom_ifaddr.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

using nlohmann::json;

// guest-network-get-interfaces as Debian's qemu-ga 7.2 answered it in the busybox test guest
// (tests/boot/agent-init) on user networking, plus an alias and an interface without addresses.
const char* kAgentReply = R"([
  {"name":"lo","ip-addresses":[{"ip-address-type":"ipv4","ip-address":"127.0.0.1","prefix":8},
    {"ip-address-type":"ipv6","ip-address":"::1","prefix":128}],"statistics":{"tx-packets":0,"tx-errs":0,
    "rx-bytes":0,"rx-dropped":0,"rx-packets":0,"rx-errs":0,"tx-bytes":0,"tx-dropped":0},
   "hardware-address":"00:00:00:00:00:00"},
  {"name":"eth0","ip-addresses":[{"ip-address-type":"ipv4","ip-address":"10.0.2.15","prefix":24},
    {"ip-address-type":"ipv6","ip-address":"fec0::5054:ff:feab:cd01","prefix":64},
    {"ip-address-type":"ipv6","ip-address":"fe80::5054:ff:feab:cd01","prefix":64}],"statistics":{"tx-packets":9,
    "tx-errs":0,"rx-bytes":1290,"rx-dropped":0,"rx-packets":3,"rx-errs":0,"tx-bytes":1286,"tx-dropped":0},
   "hardware-address":"52:54:00:ab:cd:01"},
  {"name":"eth0:1","ip-addresses":[{"ip-address-type":"ipv4","ip-address":"10.0.2.99","prefix":32}],
   "hardware-address":"52:54:00:ab:cd:01"},
  {"name":"eth1","hardware-address":"52:54:00:ab:cd:02"}])";

const std::string kHeader =
    " Name       MAC address          Protocol     Address\n"
    "-------------------------------------------------------------------------------\n";

// Byte for byte what `virsh domifaddr --source agent` (libvirt 9.0) printed for that guest, and
// with --full; the alias and eth1 lines as virsh's format strings give them.
TEST(DomIfaddr, AgentReplyAsVirshPrintsIt) {
  const std::vector<IfAddrRow> rows = AgentInterfaces(json::parse(kAgentReply));
  ASSERT_EQ(rows.size(), 3u);  // eth0:1 merged into eth0
  EXPECT_EQ(IfAddrTable(rows), kHeader +
                                   " lo         00:00:00:00:00:00    ipv4         127.0.0.1/8\n"
                                   " -          -                    ipv6         ::1/128\n"
                                   " eth0       52:54:00:ab:cd:01    ipv4         10.0.2.15/24\n"
                                   " -          -                    ipv6         fec0::5054:ff:feab:cd01/64\n"
                                   " -          -                    ipv6         fe80::5054:ff:feab:cd01/64\n"
                                   " -          -                    ipv4         10.0.2.99/32\n"
                                   " eth1       52:54:00:ab:cd:02    N/A          N/A\n"
                                   "\n");
  EXPECT_EQ(IfAddrTable({rows[0]}, /*full=*/true), kHeader +
                                                       " lo         00:00:00:00:00:00    ipv4         127.0.0.1/8\n"
                                                       " lo         00:00:00:00:00:00    ipv6         ::1/128\n"
                                                       "\n");
  EXPECT_EQ(IfAddrTable({}), kHeader + "\n");  // as virsh prints a domain without leases
}

TEST(DomIfaddr, Json) {
  const std::vector<IfAddrRow> rows = AgentInterfaces(json::parse(kAgentReply));
  EXPECT_EQ(ToJson(rows)[1], json::parse(R"({"name":"eth0","mac":"52:54:00:ab:cd:01","addresses":[
    {"protocol":"ipv4","address":"10.0.2.15","prefix":24},{"protocol":"ipv6","address":"fec0::5054:ff:feab:cd01","prefix":64},
    {"protocol":"ipv6","address":"fe80::5054:ff:feab:cd01","prefix":64},{"protocol":"ipv4","address":"10.0.2.99","prefix":32}]})"));
  EXPECT_EQ(ToJson({{"x", "", {}}})[0]["mac"], nullptr);
}

TEST(DomIfaddr, MalformedAgentRepliesAreErrors) {
  for (const char* bad : {R"({"name":"eth0"})", R"([{"ip-addresses":[]}])",
                          R"([{"name":"eth0","ip-addresses":{}}])",
                          R"([{"name":"eth0","ip-addresses":[{"ip-address-type":"ipv5","ip-address":"x","prefix":1}]}])",
                          R"([{"name":"eth0","ip-addresses":[{"ip-address-type":"ipv4","ip-address":"1.2.3.4"}]}])",
                          R"([{"name":"eth0","ip-addresses":[{"ip-address-type":"ipv4","ip-address":"1.2.3.4","prefix":-1}]}])"}) {
    EXPECT_THROW(AgentInterfaces(json::parse(bad)), std::runtime_error) << bad;
  }
}

TEST(DomIfaddr, LeasesOfUserNics) {
  const std::string xml = R"(<domain type='qemu'><name>d</name><devices>
    <interface type='user'><mac address='52:54:00:00:00:01'/><alias name='net0'/></interface>
    <interface type='bridge'><mac address='52:54:00:00:00:02'/><source bridge='br0'/><target dev='vnet0'/></interface>
    <interface type='user'><mac address='52:54:00:00:00:03'/></interface>
  </devices></domain>)";
  const std::vector<IfAddrRow> rows = UserNetworkLeases(LeaseNics(xml, "d.xml"));
  EXPECT_EQ(IfAddrTable(rows), kHeader +
                                   " -          52:54:00:00:00:01    ipv4         10.0.2.15/24\n"
                                   " -          52:54:00:00:00:03    ipv4         10.0.2.15/24\n"
                                   "\n");
}

TEST(DomIfaddr, LeaseWithoutUserNicIsEmpty) {
  EXPECT_TRUE(UserNetworkLeases({{"bridge", "52:54:00:00:00:02", "vnet0"}, {"ethernet", "52:54:00:00:00:03", "t0"}})
                  .empty());
}

}  // namespace
}  // namespace qlaunch::launcher
