// <interface> parsing: what is read, what libvirt refuses, hostile input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::ParseError;

// The <interface> starts on line 3 (<devices> on line 2).
std::string Nic(const std::string& attrs, const std::string& inner) {
  return Doc("<devices>\n<interface " + attrs + ">\n" + inner + "\n</interface>\n</devices>");
}

DomainDef Parse(const std::string& xml, bool strict = false) {
  ParseOptions o;
  o.strict = strict;
  return ParseDomainXml(xml, "test.xml", o);
}

TEST(ParseNet, EveryFieldRead) {
  DomainDef d = Parse(Nic("type='bridge'",
                          "<mac address='52:54:0:A:b:3'/><source bridge='br0'/><target dev='tapx'/>"
                          "<model type='e1000e'/><link state='down'/><boot order='2'/>"
                          "<address type='pci' domain='0x0000' bus='0x03' slot='0x00' function='0x0'/>"));
  ASSERT_EQ(d.devices.interfaces.size(), 1u);
  const Interface& n = d.devices.interfaces[0];
  EXPECT_EQ(n.type, "bridge");
  EXPECT_EQ(n.mac, "52:54:00:0a:0b:03");
  EXPECT_EQ(n.mac_line, 4);
  EXPECT_EQ(n.source_bridge, "br0");
  EXPECT_EQ(n.target_dev, "tapx");
  EXPECT_TRUE(n.target_managed);
  EXPECT_EQ(n.model, "e1000e");
  EXPECT_FALSE(n.link_up);
  EXPECT_EQ(n.boot_order, 2u);
  EXPECT_EQ(n.address.type, "pci");
  EXPECT_EQ(n.address.bus, 3u);
  EXPECT_EQ(n.line, 3);
  EXPECT_TRUE(d.warnings.empty());
}

TEST(ParseNet, DefaultsAsLibvirt) {
  DomainDef d = Parse(Nic("type='user'", ""));
  const Interface& n = d.devices.interfaces.at(0);
  EXPECT_EQ(n.model, "rtl8139");  // libvirt 9.0 on x86 without <model>
  EXPECT_EQ(n.mac, "");
  EXPECT_TRUE(n.link_up);
  EXPECT_FALSE(n.boot_order);
}

TEST(ParseNet, GeneratedTapNamesDroppedUnlessUnmanaged) {
  EXPECT_EQ(Parse(Nic("type='ethernet'", "<target dev='vnet7'/>")).devices.interfaces.at(0).target_dev, "");
  const Interface n = Parse(Nic("type='ethernet'", "<target dev='vnet7' managed='no'/>")).devices.interfaces.at(0);
  EXPECT_EQ(n.target_dev, "vnet7");
  EXPECT_FALSE(n.target_managed);
}

TEST(ParseNet, LibvirtOnlyTypesAndModelsAreSkippedWithAWarning) {
  for (const char* xml : {"type='direct'", "type='vhostuser'"}) {
    DomainDef d = Parse(Nic(xml, ""));
    EXPECT_TRUE(d.devices.interfaces.empty()) << xml;
    ASSERT_FALSE(d.warnings.empty()) << xml;
    EXPECT_EQ(d.warnings[0].line, 3);
  }
  DomainDef d = Parse(Nic("type='user'", "<model type='vmxnet3'/>"));
  EXPECT_TRUE(d.devices.interfaces.empty());
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_NE(d.warnings[0].message.find("vmxnet3"), std::string::npos);
  EXPECT_THROW(Parse(Nic("type='direct'", ""), true), DiagnosticError);
}

TEST(ParseNet, UnknownChildIsReported) {
  DomainDef d = Parse(Nic("type='user'", "<driver name='vhost'/>"));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].line, 4);
  EXPECT_EQ(d.warnings[0].element, "driver");
}

struct Bad {
  std::string label, attrs, inner, message;
  int line;
  std::string element;
};

TEST(ParseNet, BadInputNamesFileLineAndElement) {
  const std::vector<Bad> rows = {
      {"network", "type='network'", "<source network='default'/>", "type='bridge'", 3, "interface"},
      {"network names user", "type='network'", "", "type='user'", 3, "interface"},
      {"no type", "", "", "type", 3, "interface"},
      {"unknown type", "type='wifi'", "", "unknown interface type 'wifi'", 3, "interface"},
      {"multicast mac", "type='user'", "<mac address='01:00:5e:00:00:01'/>", "expected unicast mac address", 4, "mac"},
      {"broadcast mac", "type='user'", "<mac address='ff:ff:ff:ff:ff:ff'/>", "found multicast", 4, "mac"},
      {"short mac", "type='user'", "<mac address='52:54:00:01:02'/>", "unable to parse mac address", 4, "mac"},
      {"long mac", "type='user'", "<mac address='52:54:00:01:02:03:04'/>", "unable to parse", 4, "mac"},
      {"dash mac", "type='user'", "<mac address='52-54-00-01-02-03'/>", "unable to parse", 4, "mac"},
      {"three digits", "type='user'", "<mac address='52:54:00:01:02:003'/>", "unable to parse", 4, "mac"},
      {"non hex", "type='user'", "<mac address='52:54:00:01:02:0g'/>", "unable to parse", 4, "mac"},
      {"space mac", "type='user'", "<mac address=' 52:54:00:01:02:03'/>", "unable to parse", 4, "mac"},
      {"empty mac", "type='user'", "<mac address=''/>", "unable to parse", 4, "mac"},
      {"mac without address", "type='user'", "<mac/>", "address", 4, "mac"},
      {"two macs", "type='user'", "<mac address='52:54:00:01:02:03'/><mac address='52:54:00:01:02:04'/>", "once", 4,
       "mac"},
      {"unknown model", "type='user'", "<model type='x,y=z'/>", "unknown interface model 'x,y=z'", 4, "model"},
      {"bridge without source", "type='bridge'", "", "needs <source bridge", 3, "interface"},
      {"bridge name too long", "type='bridge'", "<source bridge='abcdefghijklmnop'/>", "longer than 15 bytes", 4,
       "source"},
      {"bridge name slash", "type='bridge'", "<source bridge='../etc'/>", "contains '/'", 4, "source"},
      {"tap too long", "type='ethernet'", "<target dev='tap0123456789abcd'/>", "longer than 15 bytes", 4, "target"},
      {"tap slash", "type='ethernet'", "<target dev='a/b'/>", "invalid tap name 'a/b'", 4, "target"},
      {"tap space", "type='ethernet'", "<target dev='a b'/>", "whitespace", 4, "target"},
      {"tap colon", "type='ethernet'", "<target dev='eth0:1'/>", "':'", 4, "target"},
      {"tap dotdot", "type='ethernet'", "<target dev='..'/>", "'.'", 4, "target"},
      {"bad managed", "type='ethernet'", "<target dev='t0' managed='maybe'/>", "managed", 4, "target"},
      {"unmanaged without dev", "type='ethernet'", "<target managed='no'/>", "needs dev=", 4, "target"},
      {"unmanaged bridge", "type='bridge'", "<source bridge='br0'/><target dev='t0' managed='no'/>",
       "only supported for interface type 'ethernet'", 4, "target"},
      {"bad link", "type='user'", "<link state='sideways'/>", "unknown link state 'sideways'", 4, "link"},
      {"bad boot", "type='user'", "<boot order='0'/>", "invalid boot order", 4, "boot"},
      {"drive address", "type='user'", "<address type='drive' controller='0'/>", "expected pci", 3, "interface"},
      {"bad pci slot", "type='user'", "<address type='pci' slot='0x40'/>", "invalid address slot", 4, "address"},
  };
  for (const Bad& row : rows) {
    SCOPED_TRACE(row.label);
    DiagnosticError e = ParseError(Nic(row.attrs, row.inner));
    ASSERT_FALSE(e.diagnostics().empty());
    const Diagnostic& d = e.diagnostics().front();
    EXPECT_EQ(d.file, "test.xml");
    EXPECT_NE(d.message.find(row.message), std::string::npos) << d.ToString();
    EXPECT_EQ(d.line, row.line) << d.ToString();
    EXPECT_EQ(d.element, row.element) << d.ToString();
  }
}

TEST(NormalizeMac, Table) {
  struct Case { const char* in; const char* out; };
  for (Case c : {Case{"52:54:00:AB:cd:EF", "52:54:00:ab:cd:ef"}, Case{"2:0:0:0:0:1", "02:00:00:00:00:01"},
                 Case{"52:54:00:ab:cd:e", "52:54:00:ab:cd:0e"}, Case{"52:54:00:ab:cd:", nullptr},
                 Case{"52:54:00:ab:cd:ef:", nullptr}, Case{":52:54:00:ab:cd", nullptr}, Case{"", nullptr},
                 Case{"52:54:00:ab:cd:ef\n", nullptr}, Case{"0x52:54:00:ab:cd:ef", nullptr}}) {
    auto got = NormalizeMac(c.in);
    if (c.out) {
      ASSERT_TRUE(got) << c.in;
      EXPECT_EQ(*got, c.out) << c.in;
    } else {
      EXPECT_FALSE(got) << c.in;
    }
  }
  EXPECT_TRUE(IsMulticastMac("01:00:5e:00:00:01"));
  EXPECT_TRUE(IsMulticastMac("33:33:00:00:00:01"));
  EXPECT_FALSE(IsMulticastMac("52:54:00:00:00:01"));
  EXPECT_FALSE(IsMulticastMac("02:00:00:00:00:01"));
}

}  // namespace
}  // namespace qlaunch::domain
