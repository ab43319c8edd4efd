// <controller>: what is read, and bad input with its line.
#include <gtest/gtest.h>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::ParseError;

TEST(ParseController, ReadsEveryType) {
  DomainDef def = ParseDomainXml(
      Doc("<devices>\n"
          "<controller type='usb' index='0' model='ich9-ehci1'><address type='pci' bus='0x00' slot='0x1d' function='0x7'/></controller>\n"
          "<controller type='usb' index='0' model='ich9-uhci1'><master startport='0'/></controller>\n"
          "<controller type='usb' index='1' model='qemu-xhci' ports='15'/>\n"
          "<controller type='scsi' index='0' model='virtio-scsi'/>\n"
          "<controller type='virtio-serial' index='0' ports='16' vectors='4'/>\n"
          "<controller type='sata' index='0'/>\n"
          "<controller type='pci' index='0' model='pcie-root'/>\n"
          "<controller type='pci' index='1' model='pcie-root-port'><model name='pcie-root-port'/>"
          "<target chassis='1' port='0x10'/><address type='pci' bus='0x00' slot='0x02' function='0x0' multifunction='on'/></controller>\n"
          "<controller type='pci' model='pcie-to-pci-bridge'/>\n"
          "</devices>"),
      "c.xml");
  EXPECT_TRUE(def.warnings.empty()) << def.warnings.at(0).ToString();
  const auto& c = def.devices.controllers;
  ASSERT_EQ(c.size(), 9u);
  EXPECT_EQ(c[0].model, "ich9-ehci1");
  EXPECT_EQ(c[0].address.slot, 0x1du);
  EXPECT_EQ(c[0].address.function, 7u);
  EXPECT_EQ(c[0].line, 3);
  EXPECT_EQ(c[1].master_startport, 0u);
  EXPECT_EQ(c[2].index, 1u);
  EXPECT_EQ(c[2].ports, 15u);
  EXPECT_EQ(c[3].model, "virtio-scsi");
  EXPECT_EQ(c[4].ports, 16u);
  EXPECT_EQ(c[4].vectors, 4u);
  EXPECT_EQ(c[5].type, "sata");
  EXPECT_EQ(c[7].model_name, "pcie-root-port");
  EXPECT_EQ(c[7].chassis, 1u);
  EXPECT_EQ(c[7].port, 0x10u);
  EXPECT_TRUE(c[7].address.multifunction);
  EXPECT_FALSE(c[8].index);  // chosen by the planner
}

TEST(ParseController, LibvirtOnlyModelsAreReportedAndSkipped) {
  DomainDef def = ParseDomainXml(Doc("<devices>\n<controller type='scsi' model='buslogic'/>\n"
                                     "<controller type='fdc'/>\n</devices>"),
                                 "c.xml");
  EXPECT_TRUE(def.devices.controllers.empty());
  ASSERT_EQ(def.warnings.size(), 2u);
  EXPECT_EQ(def.warnings[0].line, 3);
  EXPECT_NE(def.warnings[0].message.find("buslogic"), std::string::npos);
  EXPECT_EQ(def.warnings[1].line, 4);
}

TEST(ParseController, BadInputIsAnErrorWithItsLine) {
  struct Case {
    const char* xml;
    const char* message;
    int line;
  };
  for (const Case& c : {
           Case{"<controller type='floppy'/>", "unknown controller type 'floppy'", 3},
           Case{"<controller type='usb' model='xhci'/>", "unknown usb controller model 'xhci'", 3},
           Case{"<controller type='pci'/>", "Missing required attribute 'model'", 3},
           Case{"<controller type='pci' index='0' model='pcie-root-port'/>", "Only the root PCI controller", 3},
           Case{"<controller type='pci' index='2' model='pcie-root'/>", "must be model='pci-root'", 3},
           Case{"<controller type='usb' index='x'/>", "Invalid value for attribute 'index'", 3},
           Case{"<controller type='pci' index='1' model='pcie-root-port'>\n<target port='0x100'/></controller>",
                "Invalid value for attribute 'port'", 4},
           Case{"<controller type='usb' model='ich9-uhci1'>\n<master/></controller>", "'startport'", 4},
       }) {
    DiagnosticError e = ParseError(Doc("<devices>\n" + std::string(c.xml) + "\n</devices>"));
    const Diagnostic& d = e.diagnostics().at(0);
    EXPECT_NE(d.message.find(c.message), std::string::npos) << c.xml << ": " << d.message;
    EXPECT_EQ(d.line, c.line) << c.xml;
  }
}

}  // namespace
}  // namespace qlaunch::domain
