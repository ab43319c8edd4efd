#include <gtest/gtest.h>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::ParseError;

DomainDef Parse(const std::string& body, bool strict = false) {
  ParseOptions opts;
  opts.strict = strict;
  return ParseDomainXml(Doc(body), "test.xml", opts);
}

std::string ErrorOf(const std::string& body) {
  DiagnosticError e = ParseError(Doc(body));
  return e.diagnostics().empty() ? "" : e.diagnostics()[0].ToString();
}

TEST(ParseMachine, Features) {
  DomainDef d = Parse(
      "<features><acpi/><apic eoi='on'/><pae/><smm state='off'/><vmport state='on'/><pvspinlock/>"
      "<kvm><hidden state='on'/></kvm><ioapic driver='kvm'/>"
      "<hyperv mode='custom'><relaxed state='on'/><spinlocks state='on' retries='8191'/>"
      "<stimer state='on'><direct state='on'/></stimer><vendor_id state='on' value='KVM Hv'/>"
      "<vapic state='off'/></hyperv></features>");
  EXPECT_TRUE(d.features.acpi);
  EXPECT_TRUE(d.features.apic);
  EXPECT_TRUE(d.features.pae);
  EXPECT_EQ(d.features.apic_eoi, true);
  EXPECT_EQ(d.features.smm, false);
  EXPECT_EQ(d.features.vmport, true);
  EXPECT_EQ(d.features.pvspinlock, true);
  EXPECT_EQ(d.features.kvm_hidden, true);
  EXPECT_EQ(d.features.ioapic_driver, "kvm");
  const HypervFeatures& hv = d.features.hyperv;
  EXPECT_TRUE(hv.present);
  EXPECT_EQ(hv.Flag("relaxed"), true);
  EXPECT_EQ(hv.Flag("vapic"), false);
  EXPECT_EQ(hv.Flag("synic"), std::nullopt);
  EXPECT_EQ(hv.spinlocks_retries, 8191u);
  EXPECT_EQ(hv.stimer_direct, true);
  EXPECT_EQ(hv.vendor_id, "KVM Hv");
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_FALSE(Parse("").features.acpi);
}

TEST(ParseMachine, ClockPmSysinfo) {
  DomainDef d = Parse(
      "<clock offset='localtime'><timer name='rtc' tickpolicy='catchup' track='wall'/><timer name='pit' "
      "tickpolicy='delay'/><timer name='hpet' present='no'/></clock>"
      "<pm><suspend-to-mem enabled='no'/><suspend-to-disk enabled='yes'/></pm>"
      "<os><type>hvm</type><smbios mode='sysinfo'/></os>"
      "<sysinfo type='smbios'><bios><entry name='vendor'>V</entry></bios><oemStrings><entry>x:y</entry>"
      "</oemStrings></sysinfo>");
  EXPECT_EQ(d.clock.offset, "localtime");
  ASSERT_EQ(d.clock.timers.size(), 3u);
  EXPECT_EQ(d.clock.Find("rtc")->tickpolicy, "catchup");
  EXPECT_EQ(d.clock.Find("rtc")->track, "wall");
  EXPECT_EQ(d.clock.Find("hpet")->present, false);
  EXPECT_EQ(d.pm.suspend_to_mem, false);
  EXPECT_EQ(d.pm.suspend_to_disk, true);
  EXPECT_EQ(d.sysinfo.smbios_mode, "sysinfo");
  ASSERT_EQ(d.sysinfo.entries.size(), 2u);
  EXPECT_EQ(d.sysinfo.entries[0].section, "bios");
  EXPECT_EQ(d.sysinfo.entries[0].name, "vendor");
  EXPECT_EQ(d.sysinfo.entries[1].value, "x:y");
  EXPECT_TRUE(d.warnings.empty());
}

TEST(ParseMachine, FirmwareAndCpu) {
  DomainDef d = Parse(
      "<os firmware='efi'><type>hvm</type><firmware><feature enabled='no' name='secure-boot'/></firmware>"
      "<loader secure='no'/><nvram template='/t.fd'>/v.fd</nvram><bootmenu enable='yes'/></os>"
      "<cpu mode='custom' match='exact' check='none'><model fallback='forbid'>qemu64</model>"
      "<feature policy='disable' name='x2apic'/><feature name='vmx'/></cpu>");
  EXPECT_EQ(d.os.firmware.firmware, "efi");
  EXPECT_EQ(d.os.firmware.secure_boot, false);
  EXPECT_EQ(d.os.firmware.loader_secure, false);
  EXPECT_EQ(d.os.firmware.nvram, "/v.fd");
  EXPECT_EQ(d.os.firmware.nvram_template, "/t.fd");
  EXPECT_EQ(d.os.bootmenu, true);
  EXPECT_EQ(d.cpu.match, "exact");
  EXPECT_EQ(d.cpu.check, "none");
  EXPECT_EQ(d.cpu.fallback, "forbid");
  ASSERT_EQ(d.cpu.features.size(), 2u);
  EXPECT_EQ(d.cpu.features[0].policy, "disable");
  EXPECT_EQ(d.cpu.features[1].policy, "require");  // libvirt's default
  EXPECT_TRUE(d.warnings.empty());
  DomainDef p = Parse("<cpu mode='host-passthrough' migratable='off'/>");
  EXPECT_EQ(p.cpu.migratable, false);
}

TEST(ParseMachine, Reported) {
  // Known to libvirt, not supported by qlaunch: warned and skipped.
  DomainDef d = Parse(
      "<clock offset='variable' adjustment='3600'/><sysinfo type='fwcfg'/>"
      "<os><type>hvm</type><smbios mode='host'/></os><features><hap/><hyperv><unknownflag state='on'/></hyperv>"
      "</features><cpu><timer/></cpu>");
  EXPECT_EQ(d.clock.offset, "utc");
  EXPECT_EQ(d.sysinfo.smbios_mode, "");
  std::string all;
  for (const Diagnostic& w : d.warnings) all += w.ToString() + "\n";
  EXPECT_NE(all.find("clock offset 'variable' not supported"), std::string::npos) << all;
  EXPECT_NE(all.find("smbios mode 'host'"), std::string::npos) << all;
  EXPECT_NE(all.find("sysinfo type 'fwcfg'"), std::string::npos) << all;
  EXPECT_NE(all.find("hap"), std::string::npos) << all;
  EXPECT_NE(all.find("unknownflag"), std::string::npos) << all;
  Parse("<clock><timer name='tsc' frequency='1'/></clock>");  // reported, not an error
}

TEST(ParseMachine, Errors) {
  struct Case {
    std::string body, message;
  } cases[] = {
      {"<features><smm state='maybe'/></features>", "test.xml:2"},
      {"<features><hyperv><relaxed/></hyperv></features>", "missing 'state' attribute"},
      {"<features><hyperv><spinlocks state='on'/></hyperv></features>", "spinlock retry count"},
      {"<features><hyperv><spinlocks state='on' retries='10'/></hyperv></features>", "at least 4095"},
      {"<features><hyperv><vendor_id state='on' value='a,b'/></hyperv></features>", "','"},
      {"<clock offset='nowhere'/>", "unknown clock offset 'nowhere'"},
      {"<clock><timer name='pit' tickpolicy='merge'/></clock>", "unsupported pit tickpolicy 'merge'"},
      {"<clock><timer name='rtc' tickpolicy='discard'/></clock>", "unsupported rtc timer tickpolicy"},
      {"<clock><timer name='pit' track='wall'/></clock>", "only valid for name='rtc'"},
      {"<clock><timer name='bogus'/></clock>", "unknown timer name 'bogus'"},
      {"<sysinfo type='smbios'><bios><entry name='colour'>x</entry></bios></sysinfo>", "unknown bios entry 'colour'"},
      {"<uuid>8d5e2469-3527-479d-8e5e-50f429f09c35</uuid><sysinfo type='smbios'><system><entry name='uuid'>"
       "00000000-3527-479d-8e5e-50f429f09c35</entry></system></sysinfo>", "UUID mismatch"},
      {"<os><type>hvm</type><smbios mode='sysinfo'/></os>", "requires a <sysinfo"},
      {"<os firmware='uefi'><type>hvm</type></os>", "expected efi|bios"},
      {"<os><type>hvm</type><loader type='flash'>/x</loader></os>", "expected rom|pflash"},
      {"<cpu><feature policy='disable' name='vmx'/></cpu>", "Non-empty feature list specified without CPU model"},
      {"<cpu mode='custom'><model>qemu64</model><feature policy='sometimes' name='vmx'/></cpu>", "expected force|"},
      {"<cpu mode='custom'><model>qemu64</model><feature name='vmx,kvm=off'/></cpu>", "invalid CPU feature name"},
      {"<cpu check='maybe'/>", "expected none|partial|full"},
  };
  for (const Case& c : cases) EXPECT_NE(ErrorOf(c.body).find(c.message), std::string::npos) << c.body << "\n" << ErrorOf(c.body);
}

}  // namespace
}  // namespace qlaunch::domain
