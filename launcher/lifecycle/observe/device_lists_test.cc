#include "launcher/lifecycle/observe/device_lists.h"

#include <gtest/gtest.h>

#include "common/diagnostic.h"

namespace qlaunch::launcher {
namespace {

using nlohmann::json;

const char* kXml = R"(<domain type='qemu'><name>d</name><devices>
  <disk type='file' device='disk'><source file='/img/a.qcow2'/><target dev='vda' bus='virtio'/></disk>
  <disk type='block' device='disk'><source dev='/dev/sdb'/><target dev='vdb' bus='virtio'/></disk>
  <disk type='file' device='cdrom'><target dev='sda' bus='sata'/><readonly/></disk>
  <interface type='user'><mac address='52:54:00:00:00:01'/><model type='virtio'/><alias name='net0'/></interface>
  <interface type='bridge'><mac address='52:54:00:00:00:02'/><source bridge='br0'/><target dev='vnet0'/><model type='e1000'/></interface>
  <interface type='ethernet'><target dev='tap7'/></interface>
</devices></domain>)";

TEST(DeviceLists, DisksAsVirshReadsThem) {
  const std::vector<BlockRow> rows = BlockDevices(kXml, "d.xml");
  ASSERT_EQ(rows.size(), 3u);
  const BlockRow want[] = {{"file", "disk", "vda", "/img/a.qcow2"}, {"block", "disk", "vdb", "/dev/sdb"},
                           {"file", "cdrom", "sda", ""}};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].type, want[i].type) << i;
    EXPECT_EQ(rows[i].device, want[i].device) << i;
    EXPECT_EQ(rows[i].target, want[i].target) << i;
    EXPECT_EQ(rows[i].source, want[i].source) << i;
  }
  EXPECT_EQ(ToJson(rows)[2], json::parse(R"({"type":"file","device":"cdrom","target":"sda","source":null})"));
}

TEST(DeviceLists, InterfacesAsVirshReadsThem) {
  const std::vector<InterfaceRow> rows = Interfaces(kXml, "d.xml");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(ToJson(rows), json::parse(R"([
    {"interface":null,"type":"user","source":null,"model":"virtio","mac":"52:54:00:00:00:01"},
    {"interface":"vnet0","type":"bridge","source":"br0","model":"e1000","mac":"52:54:00:00:00:02"},
    {"interface":"tap7","type":"ethernet","source":null,"model":null,"mac":null}])"));
}

TEST(DeviceLists, NoDevicesNoRowsAndBrokenXmlIsAnError) {
  EXPECT_TRUE(BlockDevices("<domain><name>x</name></domain>", "x.xml").empty());
  EXPECT_TRUE(Interfaces("<domain><name>x</name></domain>", "x.xml").empty());
  EXPECT_THROW(BlockDevices("<domain>", "x.xml"), DiagnosticError);
}

}  // namespace
}  // namespace qlaunch::launcher
