#include "launcher/lifecycle/change/hotplug.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace qlaunch::launcher {
namespace {

using nlohmann::json;

// attach-device --json: who filled a DIMM, and for qlaunch's own fill where its workers ran (the
// NUMA lab checks them against the DIMM's host node); nothing of a fill for other devices.
TEST(HotplugJson, ADimmQlaunchFilledNamesItsWorkersCpus) {
  HotplugResult r;
  r.element = "memory";
  r.id = "dimm0";
  r.ms = 3;
  r.prealloc = "launcher";
  r.fill_ms = 12.5;
  r.fill_threads = 2;
  r.fill_cpus = IdSet{0, 1};
  r.fill_observed_cpus = IdSet{1};
  EXPECT_EQ(ToJson(r), json::parse(R"({"element":"memory","alias":"dimm0","ms":3,"prealloc":"launcher",
    "fill_ms":12.5,"fill_threads":2,"fill_cpus":[0,1],"fill_observed_cpus":[1]})"));
}

TEST(HotplugJson, ADimmFromTheWarmPoolWasNotFilled) {
  HotplugResult r;
  r.element = "memory";
  r.id = "dimm0";
  r.prealloc = "warm";
  EXPECT_EQ(ToJson(r), json::parse(R"({"element":"memory","alias":"dimm0","ms":0,"prealloc":"warm","fill_ms":0})"));
}

TEST(HotplugJson, QemusFillAndOtherDevicesHaveNoWorkers) {
  HotplugResult qemu;
  qemu.element = "memory";
  qemu.id = "dimm1";
  qemu.prealloc = "qemu";
  qemu.fill_ms = 40;
  EXPECT_EQ(ToJson(qemu), json::parse(R"({"element":"memory","alias":"dimm1","ms":0,"prealloc":"qemu","fill_ms":40})"));

  HotplugResult disk;
  disk.element = "disk";
  disk.id = "virtio-disk1";
  disk.slot = qemu::PciSlot{"pci.0", 5, 0};
  EXPECT_EQ(ToJson(disk), json::parse(R"({"element":"disk","alias":"virtio-disk1","ms":0,"pci":"pci.0:05.0"})"));
}

}  // namespace
}  // namespace qlaunch::launcher
