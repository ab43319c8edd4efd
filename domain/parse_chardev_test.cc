// <serial>, <console>, <channel>: what the parser keeps, what it reports, what it refuses.
#include <gtest/gtest.h>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::ParseError;

DomainDef Parse(const std::string& devices, ParseOptions opts = {}) {
  return ParseDomainXml(Doc("<devices>\n" + devices + "\n</devices>"), "c.xml", opts);
}

TEST(ParseCharDev, SourcesAndTargets) {
  DomainDef d = Parse(
      "<serial type='pty'><source path='/dev/pts/3'/><target type='isa-serial' port='0'><model name='isa-serial'/></target></serial>\n"
      "<serial type='file'><source path='/var/log/a,b.log' append='on'/><target port='2'/></serial>\n"
      "<serial type='tcp'><source mode='bind' host='127.0.0.1' service='4555'/><protocol type='telnet'/></serial>\n"
      "<serial type='unix'><source path='/run/s.sock'/><target type='pci-serial'/><address type='pci' slot='5'/></serial>\n"
      "<console type='pty'><target type='virtio'/></console>\n"
      "<channel type='unix'><source mode='bind'/><target type='virtio' name='org.qemu.guest_agent.0'/></channel>\n"
      "<channel type='spicevmc'><target type='virtio'/><address type='virtio-serial' controller='0' bus='0' port='3'/></channel>\n"
      "<console type='stdio'/>");
  EXPECT_TRUE(d.warnings.empty()) << d.warnings.front().ToString();
  const auto& c = d.devices.chardevs;
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0].kind, "serial");
  EXPECT_EQ(c[0].type, "pty");
  EXPECT_EQ(c[0].target_type, "isa-serial");
  EXPECT_EQ(c[0].target_port, 0u);
  EXPECT_EQ(c[1].path, "/var/log/a,b.log");
  EXPECT_TRUE(c[1].append);
  EXPECT_EQ(c[1].target_port, 2u);
  EXPECT_EQ(c[2].mode, "bind");
  EXPECT_EQ(c[2].host, "127.0.0.1");
  EXPECT_EQ(c[2].service, "4555");
  EXPECT_EQ(c[2].protocol, "telnet");
  EXPECT_EQ(c[3].mode, "connect");  // libvirt's default
  EXPECT_EQ(c[3].target_type, "pci-serial");
  EXPECT_EQ(c[3].address.type, "pci");
  EXPECT_EQ(c[3].address.slot, 5u);
  EXPECT_EQ(c[4].kind, "console");
  EXPECT_EQ(c[4].target_type, "virtio");
  EXPECT_EQ(c[5].kind, "channel");
  EXPECT_EQ(c[5].path, "");  // qlaunch's own socket
  EXPECT_EQ(c[5].mode, "bind");
  EXPECT_EQ(c[5].target_name, "org.qemu.guest_agent.0");
  EXPECT_EQ(c[6].type, "spicevmc");
  EXPECT_EQ(c[6].target_name, "com.redhat.spice.0");
  EXPECT_EQ(c[6].address.port, 3u);
  EXPECT_EQ(c[7].target_type, "serial");  // a console's default on x86
  EXPECT_EQ(c[7].line, 10);
}

TEST(ParseCharDev, AUnixChannelWithoutPathIsAlwaysAServer) {
  DomainDef d = Parse("<channel type='unix'><source mode='connect'/><target type='virtio' name='n'/></channel>");
  ASSERT_EQ(d.devices.chardevs.size(), 1u);
  EXPECT_EQ(d.devices.chardevs[0].mode, "bind");  // as libvirt: it makes the socket, QEMU listens
}

TEST(ParseCharDev, HostilePathsAreKeptAsTheyAre) {
  // Commas and '=' are escaped by the planner; the parser keeps the text byte for byte.
  DomainDef d = Parse("<serial type='file'><source path='/tmp/a,server=on,b=c'/></serial>\n"
                      "<channel type='unix'><source mode='bind' path='/tmp/x y/&#10;z'/><target type='virtio' name='a,b'/></channel>");
  ASSERT_EQ(d.devices.chardevs.size(), 2u);
  EXPECT_EQ(d.devices.chardevs[0].path, "/tmp/a,server=on,b=c");
  EXPECT_EQ(d.devices.chardevs[1].path, "/tmp/x y/\nz");
  EXPECT_EQ(d.devices.chardevs[1].target_name, "a,b");
}

TEST(ParseCharDev, UnsupportedValuesAreReportedAndSkipped) {
  DomainDef d = Parse("<serial type='udp'/>\n"
                      "<serial type='pty'><target type='usb-serial'/></serial>\n"
                      "<console type='pty'><target type='xen'/></console>\n"
                      "<channel type='unix'><source mode='bind' path='/a'/><target type='guestfwd' address='10.0.2.1' port='4600'/></channel>\n"
                      "<serial type='pty'><log file='/var/log/x'/></serial>\n"
                      "<serial type='tcp'><source host='h' service='1'/><protocol type='telnets'/></serial>");
  ASSERT_EQ(d.devices.chardevs.size(), 1u);  // the pty with <log> (ignored)
  EXPECT_EQ(d.devices.chardevs[0].type, "pty");
  std::vector<std::string> want = {"serial type 'udp'", "serial target type 'usb-serial'", "console target type 'xen'",
                                   "channel target type 'guestfwd'", "element not supported", "protocol type 'telnets'"};
  std::string all;
  for (const auto& w : d.warnings) all += w.ToString() + "\n";
  for (const auto& w : want) EXPECT_NE(all.find(w), std::string::npos) << w << " in\n" << all;
  EXPECT_THROW(Parse("<serial type='udp'/>", ParseOptions{.strict = true}), DiagnosticError);
}

TEST(ParseCharDev, ErrorsNameFileLineAndElement) {
  testing::ExpectDevicesRefused({
      {"<serial type='file'/>", "Missing source path attribute", "serial"},
      {"<serial type='unix'><source mode='bind'/></serial>", "Missing source path attribute", "serial"},
      {"<serial type='unix'><source mode='listen' path='/a'/></serial>", "mode", "source"},
      {"<serial type='tcp'><source service='1'/></serial>", "Missing source host attribute", "serial"},
      {"<serial type='tcp'><source host='h'/></serial>", "Missing source service attribute", "serial"},
      {"<serial type='tcp'><source host='h' service='1'/><protocol type='morse'/></serial>", "unknown chardev protocol type 'morse'", "protocol"},
      {"<serial type='file'><source path='/a' append='maybe'/></serial>", "append", "source"},
      {"<serial type='carrier-pigeon'/>", "unknown serial type 'carrier-pigeon'", "serial"},
      {"<serial type='pty'><target type='fancy-serial'/></serial>", "unknown serial target type", "serial"},
      {"<serial type='pty'><target type='isa-serial'><model name='pci-serial'/></target></serial>", "does not match", "model"},
      {"<serial type='pty'><target port='-1'/></serial>", "port", "target"},
      {"<serial type='pty'><address type='virtio-serial'/></serial>", "does not fit", "serial"},
      {"<serial type='spicevmc'/>", "only supported for a <channel>", "serial"},
      {"<channel type='pty'><target name='x'/></channel>", "target type must be specified", "target"},
      {"<channel type='pty'/>", "target type must be specified", "channel"},
      {"<channel type='pty'><target type='virtio'/><address type='virtio-serial' port='0'/></channel>", "reserved", "channel"},
      {"<channel type='pty'><target type='virtio'/><address type='virtio-serial' port='x'/></channel>", "invalid address port", "address"},
      {"<serial type='pty'><source/><source/></serial>", "may appear only once", "source"},
  });
}

}  // namespace
}  // namespace qlaunch::domain
