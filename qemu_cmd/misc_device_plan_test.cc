// The misc devices as libvirt 9.0 renders them (checked with `virsh domxml-to-native`).
#include "qemu_cmd/misc_device_plan.h"

#include <gtest/gtest.h>

#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/plan_diagnostic.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

std::vector<PlannedDevice> Plan(const domain::DomainDef& d, const QemuCaps& caps) {
  PlanOptions opts;
  DeviceContext ctx{&d, &caps, &opts, false};
  std::vector<PlannedDevice> devs;
  PlanMiscDevices(ctx, &devs);
  return devs;
}

domain::Rng Random(std::string source) {
  domain::Rng r;
  r.backend_model = "random";
  r.source = std::move(source);
  return r;
}

TEST(PlanMiscDevices, AbsentBalloonIsVirtioNoneIsNothing) {
  auto d = testing::MakeDomain();
  auto devs = Plan(d, testing::Caps72());
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].driver, "virtio-balloon-pci");
  EXPECT_EQ(devs[0].id, "balloon0");
  EXPECT_TRUE(devs[0].pci);
  EXPECT_EQ(devs[0].rank, PciRank::kBalloon);
  d.devices.memballoon.emplace().model = "none";
  EXPECT_TRUE(Plan(d, testing::Caps72()).empty());
}

TEST(PlanMiscDevices, InLibvirtsOrderWithTheirOptions) {
  auto d = testing::MakeDomain();
  d.devices.watchdogs = {domain::Watchdog{.model = "i6300esb", .action = "dump", .address = {}}};
  d.devices.memballoon = domain::MemBalloon{.model = "virtio", .autodeflate = true, .free_page_reporting = true, .address = {}};
  d.devices.memballoon->address.type = "pci";
  d.devices.memballoon->address.slot = 6;
  domain::Rng rate = Random("/dev/hwrng");
  rate.rate_bytes = 1234;
  rate.rate_period = 2000;
  domain::Rng tcp;
  tcp.backend_model = "egd", tcp.egd_type = "tcp", tcp.egd_mode = "connect", tcp.egd_host = "1.2.3.4",
  tcp.egd_service = "1234";
  domain::Rng unix_bind;
  unix_bind.backend_model = "egd", unix_bind.egd_type = "unix", unix_bind.egd_mode = "bind",
  unix_bind.egd_path = "/tmp/e,x.sock";
  d.devices.rngs = {rate, tcp, unix_bind};
  d.devices.panic = true;
  auto devs = Plan(d, testing::Caps72());
  ASSERT_EQ(devs.size(), 6u);
  EXPECT_EQ(devs[0].rank, PciRank::kWatchdog);
  EXPECT_EQ(devs[1].address.slot, 6u);
  for (int i = 2; i < 5; ++i) EXPECT_EQ(devs[i].rank, PciRank::kRng);
  EXPECT_FALSE(devs[5].pci);
  std::vector<std::string> want = {
      "-device", "i6300esb,id=watchdog0",
      "-watchdog-action", "pause",  // libvirt pauses, then dumps itself
      "-device", "virtio-balloon-pci,id=balloon0,deflate-on-oom=on,free-page-reporting=on",
      "-object", R"({"qom-type":"rng-random","id":"objrng0","filename":"/dev/hwrng"})",
      "-device", "virtio-rng-pci,id=rng0,rng=objrng0,max-bytes=1234,period=2000",
      "-chardev", "socket,id=charrng1,host=1.2.3.4,port=1234",
      "-object", R"({"qom-type":"rng-egd","id":"objrng1","chardev":"charrng1"})",
      "-device", "virtio-rng-pci,id=rng1,rng=objrng1",
      "-chardev", "socket,id=charrng2,path=/tmp/e,,x.sock,server=on,wait=off",
      "-object", R"({"qom-type":"rng-egd","id":"objrng2","chardev":"charrng2"})",
      "-device", "virtio-rng-pci,id=rng2,rng=objrng2",
      "-device", "pvpanic",
  };
  EXPECT_EQ(RenderDevicePlan(devs), want);
}

TEST(PlanMiscDevices, Qemu52TakesKeyValueObjects) {
  auto d = testing::MakeDomain();
  d.devices.memballoon.emplace().model = "none";
  d.devices.rngs = {Random("/dev/u,random")};
  d.devices.watchdogs = {domain::Watchdog{.model = "ib700", .action = "inject-nmi", .address = {}}};
  auto devs = Plan(d, testing::Caps52());
  EXPECT_FALSE(devs[0].pci);  // ib700 is ISA
  EXPECT_EQ(RenderDevicePlan(devs),
            (std::vector<std::string>{"-device", "ib700,id=watchdog0", "-watchdog-action", "inject-nmi", "-object",
                                      "rng-random,id=objrng0,filename=/dev/u,,random", "-device",
                                      "virtio-rng-pci,id=rng0,rng=objrng0"}));
}

TEST(PlanMiscDevices, OneWatchdogOnly) {
  auto d = testing::MakeDomain();
  d.devices.watchdogs = {domain::Watchdog{.model = "i6300esb", .address = {}},
                         domain::Watchdog{.model = "ib700", .address = {}}};
  EXPECT_THROW(Plan(d, testing::Caps72()), DiagnosticError);
}

TEST(WatchdogAction, AsLibvirt) {
  EXPECT_EQ(WatchdogAction("dump"), "pause");
  for (const char* a : {"reset", "shutdown", "poweroff", "pause", "none", "inject-nmi"}) EXPECT_EQ(WatchdogAction(a), a);
}

}  // namespace
}  // namespace qlaunch::qemu
