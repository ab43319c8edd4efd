#include <gtest/gtest.h>

#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::ParseError;

DomainDef Parse(std::string_view devices, const ParseOptions& opts = {}) {
  return ParseDomainXml(Doc("<devices>\n" + std::string(devices) + "\n</devices>"), "test.xml", opts);
}

bool Warned(const DomainDef& d, std::string_view text) {
  for (const Diagnostic& w : d.warnings)
    if (w.message.find(text) != std::string::npos) return true;
  return false;
}

TEST(ParseGraphics, PortsAndAutoport) {
  struct Case {
    const char* xml;
    std::optional<int> port;
    bool autoport;
  };
  for (const Case& c : {
           Case{"<graphics type='vnc'/>", std::nullopt, true},  // vnc without port: autoport
           Case{"<graphics type='vnc' port='-1'/>", std::nullopt, true},
           Case{"<graphics type='vnc' port='5905'/>", 5905, false},
           Case{"<graphics type='vnc' port='5905' autoport='yes'/>", std::nullopt, true},
           Case{"<graphics type='vnc' port='65535' autoport='no'/>", 65535, false},
           Case{"<graphics type='spice'/>", std::nullopt, false},  // spice: no TCP port at all
           Case{"<graphics type='spice' autoport='yes'/>", std::nullopt, true},
           Case{"<graphics type='spice' port='-1'/>", std::nullopt, true},
           Case{"<graphics type='spice' port='5899'/>", 5899, false},  // libvirt has no range for spice
       }) {
    SCOPED_TRACE(c.xml);
    DomainDef d = Parse(c.xml);
    ASSERT_EQ(d.devices.graphics.size(), 1u);
    EXPECT_EQ(d.devices.graphics[0].port, c.port);
    EXPECT_EQ(d.devices.graphics[0].autoport, c.autoport);
    EXPECT_EQ(d.devices.graphics[0].line, 3);
  }
}

TEST(ParseGraphics, Listen) {
  EXPECT_EQ(Parse("<graphics type='vnc' listen='0.0.0.0'/>").devices.graphics[0].listen, "0.0.0.0");
  EXPECT_EQ(Parse("<graphics type='vnc'><listen type='address' address='::1'/></graphics>").devices.graphics[0].listen,
            "::1");
  EXPECT_EQ(Parse("<graphics type='vnc' listen='10.0.0.1'><listen type='address' address='10.0.0.1'/></graphics>")
                .devices.graphics[0].listen,
            "10.0.0.1");
  EXPECT_EQ(Parse("<graphics type='vnc'><listen type='address'/></graphics>").devices.graphics[0].listen, "");
  DomainDef none = Parse("<graphics type='spice'><listen type='none'/></graphics>");
  EXPECT_TRUE(none.devices.graphics[0].listen_none);
}

TEST(ParseGraphics, UnsupportedAreReportedAndSkipped) {
  for (const char* xml : {"<graphics type='sdl'/>", "<graphics type='dbus'/>", "<graphics type='egl-headless'/>",
                          "<graphics type='rdp'/>", "<graphics type='vnc'><listen type='socket'/></graphics>",
                          "<graphics type='vnc'><listen type='network' network='default'/></graphics>",
                          "<graphics type='vnc' passwd='secret'/>", "<graphics type='spice' passwd='s'/>"}) {
    SCOPED_TRACE(xml);
    DomainDef d = Parse(xml);
    EXPECT_TRUE(d.devices.graphics.empty());
    ASSERT_FALSE(d.warnings.empty());
    EXPECT_EQ(d.warnings[0].line, 3);
    ParseOptions strict;
    strict.strict = true;
    EXPECT_THROW(Parse(xml, strict), DiagnosticError);
  }
  EXPECT_TRUE(Warned(Parse("<graphics type='vnc' passwd='x'/>"), "passwd"));
  EXPECT_TRUE(Warned(Parse("<graphics type='vnc' keymap='de'/>"), "keymap"));
}

TEST(ParseGraphics, VirtInstallSpice) {
  DomainDef d = Parse("<graphics type='spice' port='-1' tlsPort='-1' autoport='yes'>\n"
                      "<image compression='off'/></graphics>");
  ASSERT_EQ(d.devices.graphics.size(), 1u);
  EXPECT_TRUE(d.devices.graphics[0].autoport);
  EXPECT_EQ(d.devices.graphics[0].image_compression, "off");
  EXPECT_TRUE(d.warnings.empty());
}

TEST(ParseGraphics, BadInputNamesTheLine) {
  struct Case {
    const char* xml;
    const char* message;
    int line;
  };
  for (const Case& c : {
           Case{"<graphics type='vnc' port='5899'/>", "vnc port must be in range [5900,65535]", 3},
           Case{"<graphics type='vnc' port='65536'/>", "vnc port must be in range", 3},
           Case{"<graphics type='vnc' port='0'/>", "vnc port must be in range", 3},
           Case{"<graphics type='vnc' port='-2'/>", "vnc port must be in range", 3},
           Case{"<graphics type='vnc' port='abc'/>", "cannot parse vnc port 'abc'", 3},
           Case{"<graphics type='vnc' port='5900x'/>", "cannot parse vnc port", 3},
           Case{"<graphics type='vnc' port='99999999999999999999'/>", "cannot parse vnc port", 3},
           Case{"<graphics type='spice' tlsPort='5902'/>", "TLS is disabled", 3},
           Case{"<graphics type='spice'>\n<image compression='zip'/></graphics>", "unknown spice image compression", 4},
           Case{"<graphics type='spice' port='70000'/>", "spice port must be in range [0,65535]", 3},
           Case{"<graphics type='vnc' autoport='maybe'/>", "autoport", 3},
           Case{"<graphics type='vga'/>", "unknown graphics type 'vga'", 3},
           Case{"<graphics/>", "type", 3},
           Case{"<graphics type='vnc' listen='1.1.1.1'>\n<listen type='address' address='2.2.2.2'/></graphics>",
                "must match 'address' attribute", 3},
           Case{"<graphics type='vnc'>\n<listen/></graphics>", "listen type must be specified", 4},
           Case{"<graphics type='vnc'>\n<listen type='bogus'/></graphics>", "unknown graphics listen type", 4},
           Case{"<graphics type='vnc' listen='a b'/>", "invalid graphics listen address", 3},
           Case{"<video>\n<model type='vga' heads='2'/></video>", "doesn't support multiple 'heads'", 4},
           Case{"<video>\n<model type='virtio' heads='0'/></video>", "Zero is not permitted", 4},
           Case{"<video>\n<model type='virtio' vram='-1'/></video>", "vram", 4},
           Case{"<video>\n<model type='matrox'/></video>", "unknown video model 'matrox'", 4},
           Case{"<video>\n<model/></video>", "missing video model type", 4},
           Case{"<input type='tablet' bus='ps2'/>", "ps2 bus does not support tablet", 3},
           Case{"<input type='joystick'/>", "unknown input type 'joystick'", 3},
           Case{"<input type='mouse' bus='serial'/>", "unknown input bus 'serial'", 3},
           Case{"<sound model='gus'/>", "unknown sound model 'gus'", 3},
           Case{"<sound model='ich9'>\n<codec type='tape'/></sound>", "unknown sound codec type 'tape'", 4},
           Case{"<sound model='ac97'>\n<codec type='duplex'/></sound>", "has no codecs", 4},
           Case{"<redirdev bus='pci' type='spicevmc'/>", "unknown redirdev bus 'pci'", 3},
           Case{"<redirdev bus='usb' type='laser'/>", "unknown redirdev type 'laser'", 3},
       }) {
    SCOPED_TRACE(c.xml);
    DiagnosticError e = ParseError(Doc("<devices>\n" + std::string(c.xml) + "\n</devices>"));
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_NE(e.diagnostics()[0].message.find(c.message), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostics()[0].line, c.line) << e.what();
    EXPECT_EQ(e.diagnostics()[0].file, "test.xml");
  }
}

TEST(ParseVideo, ModelsAndSizes) {
  DomainDef d = Parse(
      "<video><model type='qxl' ram='131072' vram='32768' vram64='65536' vgamem='32768' heads='2' primary='yes'/>"
      "<address type='pci' domain='0x0000' bus='0x00' slot='0x02' function='0x0'/></video>\n"
      "<video/>\n<video><model type='none'/></video>");
  ASSERT_EQ(d.devices.videos.size(), 3u);
  const Video& q = d.devices.videos[0];
  EXPECT_EQ(q.model, "qxl");
  EXPECT_EQ(q.ram, 131072u);
  EXPECT_EQ(q.vram, 32768u);
  EXPECT_EQ(q.vram64, 65536u);
  EXPECT_EQ(q.vgamem, 32768u);
  EXPECT_EQ(q.heads, 2u);
  EXPECT_TRUE(q.primary);
  EXPECT_EQ(q.address.type, "pci");
  EXPECT_EQ(q.address.slot, 2u);
  EXPECT_EQ(d.devices.videos[1].model, "cirrus");  // libvirt's default model
  EXPECT_EQ(d.devices.videos[1].line, 4);
  EXPECT_EQ(d.devices.videos[2].model, "none");
  DomainDef skipped = Parse("<video><model type='vmvga'/></video>\n<video><model type='ramfb'/></video>");
  EXPECT_TRUE(skipped.devices.videos.empty());
  EXPECT_TRUE(Warned(skipped, "video model 'vmvga' not supported"));
}

TEST(ParseInput, DefaultBusesAndAddresses) {
  DomainDef d = Parse(
      "<input type='tablet'/>\n<input type='keyboard'/>\n<input type='mouse' bus='virtio'/>\n"
      "<input type='keyboard' bus='usb'><address type='usb' bus='0' port='3'/></input>\n"
      "<input type='passthrough' bus='virtio'><source evdev='/dev/input/event1'/></input>");
  ASSERT_EQ(d.devices.inputs.size(), 4u);
  EXPECT_EQ(d.devices.inputs[0].bus, "usb");
  EXPECT_EQ(d.devices.inputs[1].bus, "ps2");
  EXPECT_EQ(d.devices.inputs[2].bus, "virtio");
  EXPECT_EQ(d.devices.inputs[3].address.type, "usb");
  EXPECT_EQ(d.devices.inputs[3].address.usb_port, "3");
  EXPECT_TRUE(Warned(d, "input type 'passthrough' not supported"));
}

TEST(ParseSound, ModelsAndCodecs) {
  DomainDef d = Parse("<sound model='ich9'><codec type='micro'/><codec type='output'/></sound>\n"
                      "<sound model='ac97'/>\n<sound model='sb16'/>");
  ASSERT_EQ(d.devices.sounds.size(), 2u);
  EXPECT_EQ(d.devices.sounds[0].codecs, (std::vector<std::string>{"micro", "output"}));
  EXPECT_EQ(d.devices.sounds[1].model, "ac97");
  EXPECT_TRUE(Warned(d, "sound model 'sb16' not supported"));
}

TEST(ParseRedirDev, SpicevmcOnly) {
  DomainDef d = Parse("<redirdev bus='usb' type='spicevmc'/>\n"
                      "<redirdev bus='usb' type='tcp'><source mode='connect' host='h' service='1'/></redirdev>");
  ASSERT_EQ(d.devices.redirdevs.size(), 1u);
  EXPECT_EQ(d.devices.redirdevs[0].type, "spicevmc");
  EXPECT_TRUE(Warned(d, "redirdev type 'tcp' not supported"));
}

TEST(ParseGraphics, HostileInputIsRejectedOrKeptVerbatim) {
  // A listen address with a comma stays one value (the planner escapes it); control characters
  // and whitespace are refused.
  EXPECT_EQ(Parse("<graphics type='vnc' listen='1.2.3.4,password=off'/>").devices.graphics[0].listen,
            "1.2.3.4,password=off");
  EXPECT_THROW(Parse("<graphics type='vnc' listen='a&#10;b'/>"), DiagnosticError);
  EXPECT_THROW(Parse("<graphics type='vnc' port=' '/>"), DiagnosticError);
  EXPECT_THROW(Parse("<graphics type='vnc' port='+5900'/>"), DiagnosticError);
  // Only the first <listen> counts; a second one is read but not used.
  DomainDef two = Parse("<graphics type='vnc'><listen type='address' address='1.1.1.1'/>"
                        "<listen type='address' address='2.2.2.2'/></graphics>");
  EXPECT_EQ(two.devices.graphics[0].listen, "1.1.1.1");
}

}  // namespace
}  // namespace qlaunch::domain
