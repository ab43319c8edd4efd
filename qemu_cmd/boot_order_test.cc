#include "qemu_cmd/boot_order.h"

#include <gtest/gtest.h>

namespace qlaunch::qemu {
namespace {

domain::DomainDef WithDevices(std::vector<std::string> disk_kinds, size_t nets) {
  domain::DomainDef d;
  d.file = "d.xml";
  int line = 10;
  for (const std::string& kind : disk_kinds) {
    domain::Disk disk;
    disk.device = kind;
    disk.line = line++;
    d.devices.disks.push_back(disk);
  }
  for (size_t i = 0; i < nets; ++i) {
    domain::Interface n;
    n.type = "user";
    n.line = line++;
    d.devices.interfaces.push_back(n);
  }
  return d;
}

TEST(PlanBootIndexes, OsBootDevsNameTheFirstDeviceOfTheirKind) {
  struct Row {
    std::vector<std::string> boot;
    std::map<size_t, unsigned> disks, nets;
  };
  const Row rows[] = {
      {{}, {{1, 1}}, {}},                                    // no <boot>: libvirt's default, hd
      {{"hd"}, {{1, 1}}, {}},                                // the first disk, not the cdrom before it
      {{"network", "cdrom", "hd"}, {{0, 2}, {1, 3}}, {{0, 1}}},  // as libvirt 9.0 renders it
      {{"cdrom", "cdrom"}, {{0, 1}}, {}},                    // a repeat adds nothing
      {{"fd", "hd"}, {{1, 1}}, {}},                          // no floppy: hd is first
  };
  for (const Row& r : rows) {
    domain::DomainDef d = WithDevices({"cdrom", "disk", "disk"}, 2);
    d.os.boot = r.boot;
    BootIndexes b = PlanBootIndexes(d);
    EXPECT_EQ(b.disks, r.disks) << ::testing::PrintToString(r.boot);
    EXPECT_EQ(b.nets, r.nets) << ::testing::PrintToString(r.boot);
  }
}

TEST(PlanBootIndexes, DeviceOrdersAreKeptAndMayNotRepeatOrMixWithOsBoot) {
  domain::DomainDef d = WithDevices({"disk", "cdrom"}, 1);
  d.devices.disks[1].boot_order = 1;
  d.devices.interfaces[0].boot_order = 5;
  BootIndexes b = PlanBootIndexes(d);
  EXPECT_EQ(b.disks, (std::map<size_t, unsigned>{{1, 1}}));
  EXPECT_EQ(b.nets, (std::map<size_t, unsigned>{{0, 5}}));

  d.devices.disks[0].boot_order = 5;
  try {
    PlanBootIndexes(d);
    ADD_FAILURE() << "a repeated boot order was accepted";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("already used by the device at line 10"), std::string::npos) << e.what();
  }
  d.devices.disks[0].boot_order.reset();
  d.os.boot = {"hd"};
  EXPECT_THROW(PlanBootIndexes(d), DiagnosticError);
}

}  // namespace
}  // namespace qlaunch::qemu
