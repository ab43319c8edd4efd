#include "qemu_cmd/media_change_plan.h"

#include <gtest/gtest.h>

namespace qlaunch::qemu {
namespace {

using Json = nlohmann::ordered_json;

domain::Disk Cdrom(const std::string& source) {
  domain::Disk d;
  d.device = "cdrom";
  d.target_dev = "sda";
  d.target_bus = "sata";
  d.readonly = true;
  d.source = source;
  return d;
}

// The commands as one JSON text, for readable failures.
std::string Dump(const std::vector<QmpCommand>& commands) { return ToJson(commands).dump(); }

TEST(MediaChangePlan, InsertIntoAnEmptyDriveAddsBothNodesAndInsertsTheFormatNode) {
  MediaNow now{"sata0-0-0", std::nullopt, false};
  MediaChangePlan p = PlanMediaChange(Cdrom("/tmp/a,b.iso"), now, "libvirt-3", false);
  ASSERT_TRUE(p.open_tray);
  EXPECT_EQ(p.open_tray->execute, "blockdev-open-tray");
  EXPECT_EQ(p.open_tray->arguments.dump(), R"({"id":"sata0-0-0","force":false})");
  EXPECT_TRUE(p.wait_for_tray);
  // As libvirt 9.0 sends them (its blockdev-add arguments, key order included); the comma is
  // JSON, not option syntax.
  EXPECT_EQ(Dump(p.add_nodes),
            R"([{"execute":"blockdev-add","arguments":{"driver":"file","filename":"/tmp/a,b.iso","node-name":"libvirt-3-storage","auto-read-only":true,"discard":"unmap"}},)"
            R"({"execute":"blockdev-add","arguments":{"node-name":"libvirt-3-format","read-only":true,"driver":"raw","file":"libvirt-3-storage"}}])");
  EXPECT_EQ(Dump(p.commands),
            R"([{"execute":"blockdev-remove-medium","arguments":{"id":"sata0-0-0"}},)"
            R"({"execute":"blockdev-insert-medium","arguments":{"id":"sata0-0-0","node-name":"libvirt-3-format"}},)"
            R"({"execute":"blockdev-close-tray","arguments":{"id":"sata0-0-0"}}])");
  EXPECT_EQ(Dump(p.rollback), R"([{"execute":"blockdev-del","arguments":{"node-name":"libvirt-3-format"}},)"
                              R"({"execute":"blockdev-del","arguments":{"node-name":"libvirt-3-storage"}}])");
}

TEST(MediaChangePlan, ChangeDeletesTheOldNodesBeforeAddingTheNewOnes) {
  MediaNow now{"ide0-1-0", std::string("libvirt-1"), false};
  domain::Disk d = Cdrom("/dev/sr0");
  d.type = "block";
  d.target_dev = "hdc";
  d.target_bus = "ide";
  MediaChangePlan p = PlanMediaChange(d, now, "libvirt-4", true);
  ASSERT_TRUE(p.open_tray);
  EXPECT_EQ(p.open_tray->arguments.dump(), R"({"id":"ide0-1-0","force":true})");
  EXPECT_FALSE(p.wait_for_tray) << "libvirt does not wait for the tray when forced";
  std::vector<std::string> order;
  for (const QmpCommand& c : p.add_nodes) order.push_back(c.execute + " " + c.arguments["node-name"].get<std::string>());
  for (const QmpCommand& c : p.commands)
    order.push_back(c.execute + (c.arguments.contains("node-name") ? " " + c.arguments["node-name"].get<std::string>() : ""));
  EXPECT_EQ(order, (std::vector<std::string>{"blockdev-add libvirt-4-storage", "blockdev-add libvirt-4-format",
                                             "blockdev-remove-medium", "blockdev-del libvirt-1-format",
                                             "blockdev-del libvirt-1-storage", "blockdev-insert-medium libvirt-4-format",
                                             "blockdev-close-tray"}));
  EXPECT_EQ(p.add_nodes[0].arguments["driver"], "host_device");
  EXPECT_EQ(p.add_nodes[0].arguments["filename"], "/dev/sr0");
}

TEST(MediaChangePlan, EjectRemovesAndDeletesWithoutAddingAndClosesTheTray) {
  MediaNow now{"sata0-0-1", std::string("libvirt-2"), false};
  MediaChangePlan p = PlanMediaChange(Cdrom(""), now, "", false);
  EXPECT_EQ(Dump(p.commands), R"([{"execute":"blockdev-remove-medium","arguments":{"id":"sata0-0-1"}},)"
                              R"({"execute":"blockdev-del","arguments":{"node-name":"libvirt-2-format"}},)"
                              R"({"execute":"blockdev-del","arguments":{"node-name":"libvirt-2-storage"}},)"
                              R"({"execute":"blockdev-close-tray","arguments":{"id":"sata0-0-1"}}])");
  EXPECT_TRUE(p.add_nodes.empty());
  EXPECT_TRUE(p.rollback.empty());
}

TEST(MediaChangePlan, AnOpenTrayIsNotOpenedAgain) {
  MediaNow now{"sata0-0-0", std::nullopt, true};
  MediaChangePlan p = PlanMediaChange(Cdrom("/x.iso"), now, "libvirt-2", false);
  EXPECT_FALSE(p.open_tray);
  EXPECT_FALSE(p.wait_for_tray);
  EXPECT_EQ(p.commands.front().execute, "blockdev-remove-medium");
  EXPECT_EQ(p.commands.back().execute, "blockdev-close-tray");
}

TEST(MediaChangePlan, TheDiskOwnCacheAndFormatGoToTheNewNodes) {
  domain::Disk d = Cdrom("/x.qcow2");
  d.driver_type = "qcow2";
  d.cache = "none";
  MediaChangePlan p = PlanMediaChange(d, {"sata0-0-0", std::nullopt, true}, "libvirt-7", false);
  ASSERT_EQ(p.add_nodes.size(), 2u);
  EXPECT_EQ(p.add_nodes[0].arguments["cache"].dump(), R"({"direct":true,"no-flush":false})");
  EXPECT_EQ(p.add_nodes[1].arguments["driver"], "qcow2");
  EXPECT_EQ(p.add_nodes[1].arguments["cache"].dump(), R"({"direct":true,"no-flush":false})");
}

TEST(MediaChangePlan, RefusesWhatLibvirtRefuses) {
  domain::Disk disk = Cdrom("/x.img");
  disk.device = "disk";
  disk.target_dev = "vda";
  try {
    PlanMediaChange(disk, {"virtio-disk0", std::string("libvirt-1"), false}, "libvirt-2", false);
    FAIL() << "a disk's medium was changed";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "disk 'vda' is a disk, not a cdrom: only a cdrom's medium can be changed");
  }
  try {
    PlanMediaChange(Cdrom(""), {"sata0-0-0", std::nullopt, false}, "", false);
    FAIL() << "an empty drive was ejected";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "The disk device 'sda' doesn't have media");
  }
  EXPECT_THROW(PlanMediaChange(Cdrom("/x.iso"), {"sata0-0-0", std::nullopt, false}, "", false), std::invalid_argument);
}

}  // namespace
}  // namespace qlaunch::qemu
