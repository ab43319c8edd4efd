// <on_poweroff>/<on_reboot>/<on_crash>, <panic> and <seclabel model='dac'> as parsed.
#include <gtest/gtest.h>

#include "domain/parser.h"

namespace qlaunch::domain {
namespace {

DomainDef Parse(const std::string& inner) {
  return ParseDomainXml("<domain type='qemu'><name>l</name><memory unit='MiB'>64</memory>" + inner + "</domain>",
                        "l.xml");
}

TEST(ParseLifecycle, DefaultsAndLibvirtNames) {
  DomainDef d = Parse("");
  EXPECT_EQ(d.lifecycle.on_poweroff, "destroy");
  EXPECT_EQ(d.lifecycle.on_reboot, "restart");
  EXPECT_EQ(d.lifecycle.on_crash, "destroy");
  d = Parse("<on_poweroff>preserve</on_poweroff><on_reboot>rename-restart</on_reboot>"
            "<on_crash>coredump-restart</on_crash><devices><panic model='isa'/></devices>");
  EXPECT_EQ(d.lifecycle.on_poweroff, "preserve");
  EXPECT_EQ(d.lifecycle.on_reboot, "restart");
  EXPECT_EQ(d.lifecycle.on_crash, "restart");
  EXPECT_EQ(d.lifecycle.poweroff_line, 1);
  EXPECT_TRUE(d.devices.panic);
  ASSERT_EQ(d.warnings.size(), 1u);  // no core dump is taken
  EXPECT_NE(d.warnings[0].message.find("coredump-restart"), std::string::npos);
}

TEST(ParseLifecycle, BadValuesAreErrorsNamingTheElement) {
  try {
    Parse("<on_crash>explode</on_crash>");
    FAIL() << "accepted";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("l.xml:1: error: <on_crash>: unknown action 'explode'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Parse("<on_reboot>preserve</on_reboot>"), DiagnosticError);
}

TEST(ParseSecLabel, DacLabelRelabelAndOtherModels) {
  DomainDef d = Parse("<seclabel type='static' model='dac' relabel='no'><label>qemu:kvm</label></seclabel>"
                      "<seclabel type='dynamic' model='apparmor'/>");
  EXPECT_TRUE(d.seclabel.present);
  EXPECT_EQ(d.seclabel.type, "static");
  EXPECT_EQ(d.seclabel.label, "qemu:kvm");
  EXPECT_FALSE(d.seclabel.relabel);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].message.find("security model 'apparmor' not supported"), std::string::npos);
  EXPECT_THROW(Parse("<seclabel type='static' model='dac'/>"), DiagnosticError);  // no label
}

}  // namespace
}  // namespace qlaunch::domain
