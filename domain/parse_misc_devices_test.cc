// <memballoon>, <rng>, <watchdog>.
#include <gtest/gtest.h>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::ParseError;

DomainDef Parse(const std::string& devices) {
  return ParseDomainXml(Doc("<devices>\n" + devices + "\n</devices>"), "m.xml");
}

TEST(ParseMiscDevices, Everything) {
  DomainDef d = Parse(
      "<memballoon model='virtio' autodeflate='on' freePageReporting='off'><address type='pci' domain='0' bus='0' slot='6' function='0'/></memballoon>\n"
      "<rng model='virtio'><rate bytes='1234' period='2000'/><backend model='random'>/dev/hwrng</backend></rng>\n"
      "<rng model='virtio'><backend model='random'/></rng>\n"
      "<rng model='virtio'><backend model='egd' type='tcp'><source mode='connect' host='1.2.3.4' service='1234'/><protocol type='raw'/></backend></rng>\n"
      "<rng model='virtio'><backend model='egd' type='unix'><source mode='bind' path='/tmp/egd,x.sock'/></backend></rng>\n"
      "<watchdog model='i6300esb' action='poweroff'/>");
  EXPECT_TRUE(d.warnings.empty()) << d.warnings.front().ToString();
  ASSERT_TRUE(d.devices.memballoon);
  EXPECT_EQ(d.devices.memballoon->model, "virtio");
  EXPECT_EQ(d.devices.memballoon->autodeflate, true);
  EXPECT_EQ(d.devices.memballoon->free_page_reporting, false);
  EXPECT_EQ(d.devices.memballoon->address.slot, 6u);
  ASSERT_EQ(d.devices.rngs.size(), 4u);
  EXPECT_EQ(d.devices.rngs[0].source, "/dev/hwrng");
  EXPECT_EQ(d.devices.rngs[0].rate_bytes, 1234u);
  EXPECT_EQ(d.devices.rngs[0].rate_period, 2000u);
  EXPECT_EQ(d.devices.rngs[1].source, "/dev/random");  // libvirt 9.0's default
  EXPECT_EQ(d.devices.rngs[2].backend_model, "egd");
  EXPECT_EQ(d.devices.rngs[2].egd_type, "tcp");
  EXPECT_EQ(d.devices.rngs[2].egd_host, "1.2.3.4");
  EXPECT_EQ(d.devices.rngs[2].egd_service, "1234");
  EXPECT_EQ(d.devices.rngs[3].egd_path, "/tmp/egd,x.sock");
  EXPECT_EQ(d.devices.rngs[3].egd_mode, "bind");
  ASSERT_EQ(d.devices.watchdogs.size(), 1u);
  EXPECT_EQ(d.devices.watchdogs[0].model, "i6300esb");
  EXPECT_EQ(d.devices.watchdogs[0].action, "poweroff");
  EXPECT_EQ(d.devices.watchdogs[0].line, 8);
}

TEST(ParseMiscDevices, UnsupportedAreReported) {
  DomainDef d = Parse("<memballoon model='virtio'><stats period='10'/></memballoon>\n"  // not applied: reported
                      "<rng model='virtio'><backend model='builtin'/></rng>\n"
                      "<rng model='virtio-transitional'><backend model='random'/></rng>\n"
                      "<watchdog model='itco'/>");
  EXPECT_TRUE(d.devices.memballoon);
  EXPECT_TRUE(d.devices.rngs.empty());
  EXPECT_TRUE(d.devices.watchdogs.empty());
  ASSERT_EQ(d.warnings.size(), 4u);
  EXPECT_EQ(d.warnings[0].element, "stats");
  EXPECT_NE(d.warnings[1].message.find("rng backend model 'builtin'"), std::string::npos);
  EXPECT_NE(d.warnings[2].message.find("rng model 'virtio-transitional'"), std::string::npos);
  EXPECT_NE(d.warnings[3].message.find("watchdog model 'itco'"), std::string::npos);
}

TEST(ParseMiscDevices, Errors) {
  testing::ExpectDevicesRefused({
      {"<memballoon model='virtio' autodeflate='yes'/>", "autodeflate", "memballoon"},
      {"<memballoon model='virtio'><address type='virtio-serial'/></memballoon>", "PCI address", "memballoon"},
      {"<rng model='virtio'/>", "missing backend", "rng"},
      {"<rng model='virtio'><backend model='random'>/etc/shadow</backend></rng>", "not a supported random source", "backend"},
      {"<rng model='virtio'><backend model='dice'/></rng>", "unknown rng backend model 'dice'", "backend"},
      {"<rng model='virtio'><backend model='egd' type='tcp'><source host='h'/></backend></rng>", "Missing source host or service", "source"},
      {"<rng model='virtio'><backend model='egd' type='unix'><source/></backend></rng>", "Missing source path", "source"},
      {"<rng model='virtio'><backend model='egd' type='unix'/></rng>", "missing <source>", "backend"},
      {"<rng model='virtio'><rate period='10'/><backend model='random'/></rng>", "missing rate bytes", "rate"},
      {"<rng model='virtio'><rate bytes='0'/><backend model='random'/></rng>", "Zero", "rate"},
      {"<watchdog model='i6300esb' action='explode'/>", "unknown watchdog action 'explode'", "watchdog"},
      {"<watchdog model='sheepdog'/>", "unknown watchdog model 'sheepdog'", "watchdog"},
      {"<watchdog/>", "model", "watchdog"},
  });
}

}  // namespace
}  // namespace qlaunch::domain
