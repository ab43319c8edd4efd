#include "qemu_cmd/net_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "qemu_cmd/launch_plan.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

domain::Interface NicOf(std::string type, std::string model, std::string mac = "", int line = 10) {
  domain::Interface n;
  n.type = std::move(type);
  n.model = std::move(model);
  n.mac = std::move(mac);
  n.line = line;
  return n;
}

struct Planned {
  std::vector<PlannedDevice> devices;
  std::vector<std::string> argv;
};

Planned Plan(const domain::DomainDef& def, const PlanOptions& opts) {
  QemuCaps caps = testing::Caps72();
  DeviceContext ctx{&def, &caps, &opts, false};
  Planned p;
  PlanNetDevices(ctx, &p.devices);
  p.argv = RenderDevicePlan(p.devices);
  return p;
}

domain::DomainDef ThreeNics() {
  auto d = testing::MakeDomain();
  d.uuid = "6c4f1a5e-1111-4c2e-9a3b-0123456789ab";
  auto bridge = NicOf("bridge", "virtio", "", 10);
  bridge.source_bridge = "br0";
  auto user = NicOf("user", "e1000e", "52:54:00:aa:bb:01", 11);
  user.boot_order = 1;
  auto eth = NicOf("ethernet", "rtl8139", "", 12);
  eth.target_dev = "qlhtap7";
  eth.link_up = false;
  d.devices.interfaces = {bridge, user, eth};
  return d;
}

TEST(PlanNetDevices, WithTapFdsAsLibvirtStarts) {
  auto d = ThreeNics();
  PlanOptions opts;
  opts.devices.net_fds = {26, -1, 28};
  Planned p = Plan(d, opts);
  auto macs = InterfaceMacs(d);
  std::vector<std::string> want = {
      "-netdev", "tap,fd=26,id=hostnet0",
      "-device", "virtio-net-pci,id=net0,netdev=hostnet0,mac=" + macs[0],
      "-netdev", "user,id=hostnet1",
      "-device", "e1000e,id=net1,netdev=hostnet1,mac=52:54:00:aa:bb:01,bootindex=1",
      "-netdev", "tap,fd=28,id=hostnet2",
      "-device", "rtl8139,id=net2,netdev=hostnet2,mac=" + macs[2],
  };
  EXPECT_EQ(p.argv, want);
  for (const PlannedDevice& dev : p.devices) {
    EXPECT_TRUE(dev.pci);
    EXPECT_EQ(dev.rank, PciRank::kNet);
    EXPECT_EQ(dev.family, "net");
    EXPECT_EQ(dev.element, "interface");
  }
  EXPECT_EQ(p.devices[2].line, 12);
  EXPECT_EQ(LinkDownNicIds(d), std::vector<std::string>{"net2"});
}

TEST(PlanNetDevices, WithoutResourcesQemuDoesItAlone) {
  auto d = ThreeNics();
  d.devices.interfaces[2].target_managed = false;
  auto auto_tap = NicOf("ethernet", "virtio", "", 13);
  d.devices.interfaces.push_back(auto_tap);
  auto evil = NicOf("bridge", "virtio", "52:54:00:00:00:09", 14);
  evil.source_bridge = "br0";
  evil.target_dev = "b,script=/x";  // (the parser refuses it; the planner must still escape)
  d.devices.interfaces.push_back(evil);
  QemuCaps caps = testing::Caps72();
  PlanOptions opts;
  DeviceContext ctx{&d, &caps, &opts, false};
  std::vector<PlannedDevice> devs;
  PlanNetDevices(ctx, &devs);
  ASSERT_EQ(devs.size(), 5u);
  EXPECT_EQ(devs[0].host_args.at(0).value, "tap,id=hostnet0,script=no,downscript=no");
  EXPECT_EQ(devs[1].host_args.at(0).value, "user,id=hostnet1");
  EXPECT_EQ(devs[2].host_args.at(0).value, "tap,id=hostnet2,ifname=qlhtap7,script=no,downscript=no");
  EXPECT_EQ(devs[3].host_args.at(0).value, "tap,id=hostnet3,script=no,downscript=no");
  EXPECT_EQ(devs[4].host_args.at(0).value, "tap,id=hostnet4,ifname=b,,script=/x,script=no,downscript=no");
  auto notes = NetPlanNotes(ctx);
  ASSERT_EQ(notes.size(), 4u);  // every interface but the user one
  EXPECT_EQ(notes[0].line, 10);
  EXPECT_NE(notes[0].message.find("master br0"), std::string::npos);
  EXPECT_NE(notes[1].message.find("CAP_NET_ADMIN"), std::string::npos);
}

TEST(PlanNetDevices, ModelsAndAddress) {
  auto d = testing::MakeDomain();
  for (const char* m : {"virtio", "e1000", "e1000e", "rtl8139"}) d.devices.interfaces.push_back(NicOf("user", m));
  d.devices.interfaces[1].address.type = "pci";
  d.devices.interfaces[1].address.slot = 5;
  Planned p = Plan(d, PlanOptions{});
  ASSERT_EQ(p.devices.size(), 4u);
  EXPECT_EQ(p.devices[0].driver, "virtio-net-pci");
  EXPECT_EQ(p.devices[1].driver, "e1000");
  EXPECT_EQ(p.devices[2].driver, "e1000e");
  EXPECT_EQ(p.devices[3].driver, "rtl8139");
  EXPECT_EQ(p.devices[1].address.slot, 5u);
  EXPECT_EQ(p.devices[3].id, "net3");
}

TEST(PlanNetDevices, BootDevNetworkGivesTheFirstNicABootindex) {
  auto d = testing::MakeDomain();
  d.os.boot = {"network"};
  d.devices.interfaces = {NicOf("user", "virtio"), NicOf("user", "virtio")};
  Planned p = Plan(d, PlanOptions{});
  auto has_bootindex = [](const PlannedDevice& dev) {
    for (const auto& [k, v] : dev.props)
      if (k == "bootindex") return true;
    return false;
  };
  EXPECT_TRUE(has_bootindex(p.devices[0]));
  EXPECT_FALSE(has_bootindex(p.devices[1]));
}

TEST(DerivedMac, StablePureInLibvirtsRangeAndDistinct) {
  auto d = testing::MakeDomain();
  d.uuid = "6c4f1a5e-1111-4c2e-9a3b-0123456789ab";
  for (int i = 0; i < 40; ++i) d.devices.interfaces.push_back(NicOf("user", "virtio"));
  d.devices.interfaces[3].mac = "52:54:00:00:00:01";
  auto macs = InterfaceMacs(d);
  EXPECT_EQ(macs, InterfaceMacs(d));
  std::set<std::string> distinct(macs.begin(), macs.end());
  EXPECT_EQ(distinct.size(), macs.size());
  EXPECT_EQ(macs[3], "52:54:00:00:00:01");
  for (const auto& m : macs) {
    EXPECT_EQ(m.size(), 17u);
    EXPECT_EQ(m.substr(0, 9), "52:54:00:") << m;
  }
  // Another uuid gives other MACs; without a uuid the name decides.
  auto other = d;
  other.uuid = "6c4f1a5e-1111-4c2e-9a3b-0123456789ac";
  EXPECT_NE(InterfaceMacs(other)[0], macs[0]);
  auto by_name = d;
  by_name.uuid.clear();
  auto renamed = by_name;
  renamed.name = "vm2";
  EXPECT_NE(InterfaceMacs(by_name)[0], InterfaceMacs(renamed)[0]);
  // A derived MAC that another interface already has is skipped.
  auto clash = d;
  clash.devices.interfaces.resize(2);
  clash.devices.interfaces[1].mac = DerivedMac(clash, 0, {});
  auto clash_macs = InterfaceMacs(clash);
  EXPECT_NE(clash_macs[0], clash_macs[1]);
  // Pinned: the derivation must not change between releases (list/dominfo, guests' leases).
  EXPECT_EQ(macs[0], "52:54:00:9a:81:8d");
}

}  // namespace
}  // namespace qlaunch::qemu
