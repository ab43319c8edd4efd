// A device file for attach-device/detach-device: one device element, parsed by the family
// parsers, every error naming the file and line.
#include "domain/parse_fragment.h"

#include <gtest/gtest.h>

namespace qlaunch::domain {
namespace {

std::string ErrorOf(const std::string& xml) {
  try {
    ParseDeviceXml(xml, "dev.xml");
  } catch (const DiagnosticError& e) {
    return e.diagnostics().at(0).ToString();
  }
  return "no error";
}

TEST(ParseDeviceXml, OneDeviceOfItsFamily) {
  const DeviceFragment f = ParseDeviceXml(
      "<?xml version='1.0'?>\n<disk type='file' device='cdrom'>\n  <source file='/i/a.iso'/>\n"
      "  <target dev='sdb' bus='sata'/>\n</disk>\n",
      "dev.xml");
  EXPECT_EQ(f.file, "dev.xml");
  EXPECT_EQ(f.text.rfind("<?xml version='1.0'?>\n<disk type='file' device='cdrom'>", 0), 0u);
  EXPECT_EQ(f.element, "disk");
  EXPECT_EQ(f.line, 2);
  ASSERT_EQ(f.devices.disks.size(), 1u);
  EXPECT_EQ(f.devices.disks[0].device, "cdrom");
  EXPECT_EQ(f.devices.disks[0].target_dev, "sdb");
  EXPECT_EQ(f.devices.disks[0].line, 2);
  const DeviceFragment nic = ParseDeviceXml("<interface type='user'><model type='e1000'/></interface>", "n.xml");
  ASSERT_EQ(nic.devices.interfaces.size(), 1u);
  EXPECT_EQ(nic.devices.interfaces[0].model, "e1000");
  EXPECT_EQ(ParseDeviceXml("<channel type='unix'><target type='virtio' name='a.b'/></channel>", "c.xml")
                .devices.chardevs.at(0).target_name,
            "a.b");
}

TEST(ParseDeviceXml, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(ErrorOf("<domain type='qemu'/>"),
            "dev.xml:1: error: <domain>: expected one device element (<disk>, <interface>, ...), not a whole <domain>");
  EXPECT_EQ(ErrorOf("<disk type='file'>\n<target dev='vdb' bus='virtio' bogus='1'/></disk>"),
            "dev.xml:2: error: <target>: attribute 'bogus' not supported by qlaunch");
  EXPECT_EQ(ErrorOf("<frobnicator/>"), "dev.xml:1: error: <frobnicator>: element not supported by qlaunch");
  EXPECT_NE(ErrorOf("<disk type='network'><target dev='vdb'/></disk>").find("dev.xml:1: error: <disk>:"), std::string::npos);
  EXPECT_NE(ErrorOf("<disk").find("dev.xml:1"), std::string::npos);
  EXPECT_NE(ErrorOf("<interface type='user'><mac address='nope'/></interface>").find("dev.xml:1: error: <mac>:"),
            std::string::npos);
}

}  // namespace
}  // namespace qlaunch::domain
