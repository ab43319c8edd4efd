#include "qemu_cmd/disk_plan.h"

#include <gtest/gtest.h>

#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

TEST(DiskNameToIndex, LibvirtNaming) {
  struct Case { const char* name; int index; };
  for (Case c : {Case{"hda", 0}, Case{"hdd", 3}, Case{"vdb", 1}, Case{"sdz", 25}, Case{"sdaa", 26},
                 Case{"xvdc", 2}, Case{"vda1", -1}, Case{"hd", -1}, Case{"nvme0n1", -1}, Case{"vdA", -1}}) {
    EXPECT_EQ(DiskNameToIndex(c.name), c.index) << c.name;
  }
}

TEST(RenderDisks, BusesAndControllers) {
  auto d = testing::MakeDomain();
  d.devices.disks = {
      testing::DiskOf("block", "disk", "raw", "/dev/vg/a", "hdb", "ide", false, 10),
      testing::DiskOf("file", "disk", "raw", "/img/b", "sdb", "sata", true, 11),
      testing::DiskOf("file", "cdrom", "raw", "", "sdc", "scsi", false, 12),
      testing::DiskOf("file", "disk", "raw", "/img/c", "sda", "scsi", false, 13),
  };
  std::vector<std::string> argv;
  RenderDisks(d, &argv);
  std::vector<std::string> want = {
      "-drive", "file=/dev/vg/a,format=raw,if=none,id=drive-hdb",
      "-device", "ide-hd,bus=ide.0,unit=1,drive=drive-hdb,id=hdb",
      "-device", "ahci,id=sata0",
      "-drive", "file=/img/b,format=raw,if=none,id=drive-sdb,readonly=on",
      "-device", "ide-hd,bus=sata0.1,drive=drive-sdb,id=sdb",
      "-device", "virtio-scsi-pci,id=scsi0",
      "-drive", "if=none,id=drive-sdc,readonly=on",
      "-device", "scsi-cd,bus=scsi0.0,scsi-id=2,drive=drive-sdc,id=sdc",
      "-drive", "file=/img/c,format=raw,if=none,id=drive-sda",
      "-device", "scsi-hd,bus=scsi0.0,scsi-id=0,drive=drive-sda,id=sda",
  };
  EXPECT_EQ(argv, want);
}

TEST(RenderDisks, UnknownBusIsAnError) {
  auto d = testing::MakeDomain();
  d.devices.disks = {testing::DiskOf("file", "disk", "raw", "/img/a", "fda", "fdc", false, 10)};
  std::vector<std::string> argv;
  try {
    RenderDisks(d, &argv);
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().at(0).line, 10);
  }
}

}  // namespace
}  // namespace qlaunch::qemu
