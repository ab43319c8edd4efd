// PlanMachine against what `virsh domxml-to-native` (libvirt 9.0, QEMU 7.2) prints for the same
// XML: each case is a domain fragment and the options libvirt renders for it.
#include "qemu_cmd/machine_plan.h"

#include <gtest/gtest.h>

#include "domain/parser.h"
#include "qemu_cmd/launch_plan.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

domain::DomainDef Parse(const std::string& body, const std::string& os_extra = "", const std::string& machine = "q35",
                        const std::string& type = "kvm", const std::string& os_attrs = "") {
  std::string xml = "<domain type='" + type + "'><name>m1</name><memory>131072</memory>\n<os " + os_attrs +
                    "><type arch='x86_64' machine='" + machine + "'>hvm</type>" + os_extra + "</os>\n" + body +
                    "\n</domain>";
  return domain::ParseDomainXml(xml, "t.xml", {});
}

struct Planned {
  MachineArgs args;
  std::string Flat(const std::vector<DeviceArg>& v) const {
    std::string s;
    for (const DeviceArg& a : v) s += (s.empty() ? "" : " ") + a.opt + (a.value.empty() ? "" : " " + a.value);
    return s;
  }
  std::string cpu() const {
    std::string s;
    for (const auto& p : args.cpu_suffix) s += p;
    return s;
  }
  std::string machine() const {
    std::string s;
    for (const auto& [k, v] : args.machine_props) s += "," + k + "=" + v;
    return s;
  }
};

Planned Plan(const domain::DomainDef& def, const std::string& nvram = "",
             const std::string& caps = "qemu-7.2.json") {
  static const QemuCaps c72 = testing::LoadCapsFixture("qemu-7.2.json");
  static const QemuCaps c52 = testing::LoadCapsFixture("qemu-5.2.json");
  PlanOptions opts;
  opts.devices.nvram_path = nvram;
  DeviceContext ctx{&def, caps == "qemu-5.2.json" ? &c52 : &c72, &opts, IsQ35(def.os.machine)};
  return Planned{PlanMachine(ctx)};
}

std::string PlanErrorOf(const domain::DomainDef& def) {
  try {
    Plan(def);
  } catch (const DiagnosticError& e) {
    return e.diagnostics().at(0).ToString();
  }
  return "(no error)";
}

TEST(PlanMachine, NoAcpiIsNoAcpi) {
  Planned p = Plan(Parse(""));
  EXPECT_EQ(p.Flat(p.args.before_boot), "-no-acpi");
  EXPECT_EQ(p.Flat(p.args.after_monitor), "-rtc base=utc");
  EXPECT_EQ(p.cpu(), "");
  EXPECT_EQ(p.machine(), "");
}

TEST(PlanMachine, FeaturesOnTheMachine) {
  Planned p = Plan(Parse("<features><acpi/><apic/><pae/><smm state='on'/><vmport state='off'/></features>"));
  EXPECT_EQ(p.machine(), ",vmport=off,smm=on");
  EXPECT_EQ(p.Flat(p.args.before_boot), "");
  Planned q = Plan(Parse("<features><ioapic driver='qemu'/><apic eoi='off'/><pvspinlock state='on'/></features>"));
  EXPECT_EQ(q.machine(), ",kernel_irqchip=split");
  EXPECT_EQ(q.cpu(), ",kvm-pv-eoi=off,kvm-pv-unhalt=on");
}

// virt-install's clock and pm for linux2022 on q35 and pc.
TEST(PlanMachine, VirtInstallClockAndPm) {
  const std::string body =
      "<features><acpi/><apic/></features><clock offset='utc'><timer name='rtc' tickpolicy='catchup'/>"
      "<timer name='pit' tickpolicy='delay'/><timer name='hpet' present='no'/></clock>"
      "<pm><suspend-to-mem enabled='no'/><suspend-to-disk enabled='no'/></pm>";
  Planned q35 = Plan(Parse(body));
  EXPECT_EQ(q35.Flat(q35.args.after_monitor),
            "-rtc base=utc,driftfix=slew -global kvm-pit.lost_tick_policy=delay -no-hpet");
  EXPECT_EQ(q35.Flat(q35.args.before_boot), "-global ICH9-LPC.disable_s3=1 -global ICH9-LPC.disable_s4=1");
  Planned pc = Plan(Parse("<features><acpi/></features><pm><suspend-to-mem enabled='yes'/><suspend-to-disk enabled='no'/></pm>", "", "pc"));
  EXPECT_EQ(pc.Flat(pc.args.before_boot), "-global PIIX4_PM.disable_s3=0 -global PIIX4_PM.disable_s4=1");
}

TEST(PlanMachine, Timers) {
  struct Case {
    std::string clock, after_monitor, cpu;
  } cases[] = {
      {"<clock offset='localtime'/>", "-rtc base=localtime", ""},
      {"<clock offset='utc'><timer name='rtc' tickpolicy='delay'/><timer name='pit' tickpolicy='catchup'/>"
       "<timer name='hpet' present='yes'/></clock>", "-rtc base=utc", ""},
      {"<clock><timer name='pit' tickpolicy='discard'/></clock>", "-rtc base=utc -global kvm-pit.lost_tick_policy=discard", ""},
      {"<clock><timer name='pit' present='no'/></clock>", "-rtc base=utc -global kvm-pit.lost_tick_policy=delay", ""},
      {"<clock><timer name='rtc' tickpolicy='catchup' track='wall'/></clock>", "-rtc base=utc,clock=host,driftfix=slew", ""},
      {"<clock><timer name='rtc' track='guest'/></clock>", "-rtc base=utc,clock=vm", ""},
      {"<clock><timer name='rtc' track='realtime'/></clock>", "-rtc base=utc,clock=rt", ""},
      {"<clock><timer name='kvmclock' present='no'/><timer name='hypervclock' present='yes'/></clock>", "-rtc base=utc",
       ",kvmclock=off,hv-time=on"},
      {"<clock><timer name='hypervclock' present='no'/></clock>", "-rtc base=utc", ""},
  };
  for (const Case& c : cases) {
    Planned p = Plan(Parse(c.clock));
    EXPECT_EQ(p.Flat(p.args.after_monitor), c.after_monitor) << c.clock;
    EXPECT_EQ(p.cpu(), c.cpu) << c.clock;
  }
}

TEST(PlanMachine, Hyperv) {
  Planned p = Plan(Parse(
      "<features><acpi/><hyperv mode='custom'><avic state='on'/><evmcs state='off'/><ipi state='on'/>"
      "<tlbflush state='on'/><reenlightenment state='on'/><vendor_id state='on' value='KVM Hv'/>"
      "<runtime state='on'/><stimer state='on'><direct state='on'/></stimer><synic state='on'/>"
      "<vpindex state='on'/><spinlocks state='on' retries='4096'/><relaxed state='on'/><vapic state='off'/>"
      "<frequencies state='on'/><reset state='off'/></hyperv><kvm><hidden state='on'/></kvm>"
      "<pvspinlock state='off'/></features>"));
  EXPECT_EQ(p.cpu(),
            ",kvm-pv-unhalt=off,hv-relaxed=on,hv-spinlocks=0x1000,hv-vpindex=on,hv-runtime=on,hv-synic=on,"
            "hv-stimer=on,hv-stimer-direct=on,hv-vendor-id=KVM Hv,hv-frequencies=on,hv-reenlightenment=on,"
            "hv-tlbflush=on,hv-ipi=on,hv-avic=on,kvm=off");
  Planned q = Plan(Parse("<features><acpi/><hyperv><relaxed state='on'/><vapic state='on'/>"
                         "<spinlocks state='on' retries='8191'/></hyperv></features>"
                         "<clock offset='localtime'><timer name='hypervclock' present='yes'/></clock>"));
  EXPECT_EQ(q.cpu(), ",hv-time=on,hv-relaxed=on,hv-vapic=on,hv-spinlocks=0x1fff");
  Planned pt = Plan(Parse("<features><hyperv mode='passthrough'/></features>"));
  EXPECT_EQ(pt.cpu(), ",hv-passthrough=on");
  EXPECT_THROW(Plan(Parse("<features><hyperv><avic state='on'/></hyperv></features>"), "", "qemu-5.2.json"),
               DiagnosticError);
}

TEST(PlanMachine, CpuModesAndFeatures) {
  struct Case {
    std::string cpu, suffix;
  } cases[] = {
      {"<cpu mode='host-passthrough' check='none'/>", ",migratable=on"},
      {"<cpu mode='host-passthrough' migratable='off'/>", ",migratable=off"},
      {"<cpu mode='host-passthrough'><feature policy='disable' name='vmx'/></cpu>", ",migratable=on,vmx=off"},
      {"<cpu mode='maximum'><feature policy='disable' name='vmx'/></cpu>", ",migratable=on,vmx=off"},
      {"<cpu mode='host-model' check='partial'/>", ""},
      {"<cpu mode='custom' match='exact' check='none'><model fallback='allow'>Skylake-Client</model>"
       "<feature policy='require' name='vmx'/><feature policy='disable' name='x2apic'/>"
       "<feature policy='optional' name='pdpe1gb'/><feature policy='force' name='ss'/>"
       "<feature policy='forbid' name='rtm'/></cpu>",
       ",vmx=on,x2apic=off,ss=on,rtm=off"},
      {"<cpu mode='custom' match='exact' check='none'><model fallback='forbid'>qemu64</model>"
       "<feature policy='require' name='vmx'/></cpu><features><hyperv><relaxed state='on'/></hyperv></features>"
       "<clock offset='utc'><timer name='kvmclock' present='no'/></clock>",
       ",vmx=on,kvmclock=off,hv-relaxed=on"},
  };
  for (const Case& c : cases) EXPECT_EQ(Plan(Parse(c.cpu)).cpu(), c.suffix) << c.cpu;
}

TEST(PlanMachine, Smbios) {
  const std::string sysinfo =
      "<sysinfo type='smbios'><bios><entry name='version'>1.0</entry><entry name='vendor'>Ven,dor</entry></bios>"
      "<system><entry name='family'>Virtual Machine</entry><entry name='manufacturer'>Fedora</entry></system>"
      "<baseBoard><entry name='manufacturer'>LENOVO</entry></baseBoard><baseBoard><entry name='product'>X</entry>"
      "</baseBoard><chassis><entry name='sku'>Type3Sku1</entry></chassis><oemStrings><entry>a:b</entry>"
      "<entry>otherappname:more, arbitrary data</entry></oemStrings></sysinfo>";
  Planned p = Plan(Parse(sysinfo, "<smbios mode='sysinfo'/>"));
  EXPECT_EQ(p.Flat(p.args.after_uuid),
            "-smbios type=0,vendor=Ven,,dor,version=1.0 -smbios type=1,manufacturer=Fedora,family=Virtual Machine "
            "-smbios type=2,manufacturer=LENOVO -smbios type=3,sku=Type3Sku1 "
            "-smbios type=11,value=a:b,value=otherappname:more,, arbitrary data");
  Planned none = Plan(Parse(sysinfo));  // without <smbios mode='sysinfo'>: nothing (as libvirt)
  EXPECT_EQ(none.Flat(none.args.after_uuid), "");
  Planned emulate = Plan(Parse(sysinfo, "<smbios mode='emulate'/>"));
  EXPECT_EQ(emulate.Flat(emulate.args.after_uuid), "");
}

const std::string kCode0 =
    R"(-blockdev {"driver":"file","filename":"CODE","node-name":"libvirt-pflash0-storage","auto-read-only":true,"discard":"unmap"} )"
    R"(-blockdev {"node-name":"libvirt-pflash0-format","read-only":RO,"driver":"raw","file":"libvirt-pflash0-storage"})";
const std::string kVars1 =
    R"( -blockdev {"driver":"file","filename":"VARS","node-name":"libvirt-pflash1-storage","auto-read-only":true,"discard":"unmap"} )"
    R"(-blockdev {"node-name":"libvirt-pflash1-format","read-only":false,"driver":"raw","file":"libvirt-pflash1-storage"})";

std::string Pflash(const std::string& code, bool ro, const std::string& vars) {
  std::string s = kCode0;
  s.replace(s.find("CODE"), 4, code);
  s.replace(s.find("RO"), 2, ro ? "true" : "false");
  if (!vars.empty()) {
    std::string v = kVars1;
    s += v.replace(v.find("VARS"), 4, vars);
  }
  return s;
}

TEST(PlanMachine, EfiAutoselection) {
  // q35: the first descriptor (secure boot, keys enrolled) wins; it needs SMM.
  Planned q35 = Plan(Parse("<features><acpi/></features>", "", "q35", "kvm", "firmware='efi'"));
  EXPECT_EQ(q35.Flat(q35.args.before_machine),
            Pflash("/usr/share/OVMF/OVMF_CODE_4M.ms.fd", true, "/var/lib/qlaunch/nvram/m1_VARS.fd"));
  EXPECT_EQ(q35.machine(), ",smm=on,pflash0=libvirt-pflash0-format,pflash1=libvirt-pflash1-format");
  EXPECT_EQ(q35.Flat(q35.args.after_cpu), "-global driver=cfi.pflash01,property=secure,value=on");
  EXPECT_EQ(q35.Flat(q35.args.before_boot), "");
  // pc: only the plain one targets i440fx.
  Planned pc = Plan(Parse("<features><acpi/></features>", "", "pc", "kvm", "firmware='efi'"), "/tmp/given.fd");
  EXPECT_EQ(pc.Flat(pc.args.before_machine), Pflash("/usr/share/OVMF/OVMF_CODE_4M.fd", true, "/tmp/given.fd"));
  EXPECT_EQ(pc.machine(), ",pflash0=libvirt-pflash0-format,pflash1=libvirt-pflash1-format");
  EXPECT_EQ(pc.Flat(pc.args.after_cpu), "");
  // Secure boot off, enrolled keys off.
  Planned plain = Plan(Parse("<features><acpi/></features>",
                             "<firmware><feature enabled='no' name='secure-boot'/></firmware>", "q35", "kvm",
                             "firmware='efi'"));
  EXPECT_EQ(plain.Flat(plain.args.before_machine),
            Pflash("/usr/share/OVMF/OVMF_CODE_4M.fd", true, "/var/lib/qlaunch/nvram/m1_VARS.fd"));
  Planned nokeys = Plan(Parse("<features><acpi/></features>",
                              "<firmware><feature enabled='no' name='enrolled-keys'/></firmware>", "q35", "kvm",
                              "firmware='efi'"));
  EXPECT_EQ(nokeys.Flat(nokeys.args.before_machine),
            Pflash("/usr/share/OVMF/OVMF_CODE_4M.secboot.fd", true, "/var/lib/qlaunch/nvram/m1_VARS.fd"));
  EXPECT_EQ(nokeys.Flat(nokeys.args.after_cpu), "-global driver=cfi.pflash01,property=secure,value=on");
  // The XML's own <nvram> path.
  Planned own = Plan(Parse("<features><acpi/><smm state='on'/></features>", "<nvram>/srv/v.fd</nvram>", "q35", "kvm",
                           "firmware='efi'"));
  EXPECT_EQ(own.machine(), ",smm=on,pflash0=libvirt-pflash0-format,pflash1=libvirt-pflash1-format");
  EXPECT_NE(own.Flat(own.args.before_machine).find(R"("filename":"/srv/v.fd")"), std::string::npos);
}

TEST(PlanMachine, ExplicitLoaders) {
  Planned rom = Plan(Parse("", "<loader>/usr/share/seabios/bios.bin</loader>"));
  EXPECT_EQ(rom.Flat(rom.args.after_cpu), "-bios /usr/share/seabios/bios.bin");
  EXPECT_EQ(rom.Flat(rom.args.before_machine), "");
  Planned rw = Plan(Parse("<features><acpi/></features>", "<loader type='pflash'>/srv/CODE.fd</loader>"));
  EXPECT_EQ(rw.Flat(rw.args.before_machine), Pflash("/srv/CODE.fd", false, ""));
  EXPECT_EQ(rw.machine(), ",pflash0=libvirt-pflash0-format");
  Planned ro = Plan(Parse("<features><acpi/><smm state='on'/></features>",
                          "<loader readonly='yes' secure='yes' type='pflash'>/usr/share/OVMF/OVMF_CODE_4M.secboot.fd</loader>"
                          "<nvram template='/usr/share/OVMF/OVMF_VARS_4M.fd'>/tmp/x_VARS.fd</nvram>"));
  EXPECT_EQ(ro.Flat(ro.args.before_machine), Pflash("/usr/share/OVMF/OVMF_CODE_4M.secboot.fd", true, "/tmp/x_VARS.fd"));
  EXPECT_EQ(ro.Flat(ro.args.after_cpu), "-global driver=cfi.pflash01,property=secure,value=on");
  EXPECT_EQ(ro.machine(), ",smm=on,pflash0=libvirt-pflash0-format,pflash1=libvirt-pflash1-format");
}

TEST(PlanMachine, FirmwareTemplateAndDefaultPath) {
  domain::DomainDef def = Parse("<features><acpi/></features>",
                                "<loader readonly='yes' type='pflash'>/usr/share/OVMF/OVMF_CODE_4M.fd</loader>");
  FirmwarePlan fw = PlanFirmware(def, true, "");
  EXPECT_EQ(fw.nvram, "/var/lib/qlaunch/nvram/m1_VARS.fd");
  EXPECT_TRUE(fw.nvram_default);
  EXPECT_EQ(fw.nvram_template, "/usr/share/OVMF/OVMF_VARS_4M.fd");  // from the descriptor of that code
  domain::DomainDef bios = Parse("", "", "q35", "kvm", "firmware='bios'");
  EXPECT_EQ(PlanFirmware(bios, true, "").kind, FirmwarePlan::Kind::kDefault);
}

TEST(PlanMachine, RefusedAsLibvirtRefuses) {
  EXPECT_NE(PlanErrorOf(Parse("", "", "q35", "kvm", "firmware='efi'")).find("UEFI requires ACPI"), std::string::npos);
  EXPECT_NE(PlanErrorOf(Parse("<features><acpi/><smm state='off'/></features>", "", "q35", "kvm", "firmware='efi'"))
                .find("SMM turned off"),
            std::string::npos);
  EXPECT_NE(PlanErrorOf(Parse("<features><acpi/></features>",
                              "<loader readonly='yes' type='pflash'>/c.fd</loader>", "q35", "kvm", "firmware='efi'"))
                .find("'readonly' cannot be specified"),
            std::string::npos);
  EXPECT_NE(PlanErrorOf(Parse("<features><acpi/></features>",
                              "<loader readonly='yes' secure='yes' type='pflash'>/c.fd</loader>"))
                .find("Secure boot requires SMM"),
            std::string::npos);
  EXPECT_NE(PlanErrorOf(Parse("<features><acpi/><smm/></features>",
                              "<loader readonly='yes' secure='yes' type='pflash'>/c.fd</loader>", "pc"))
                .find("q35 machine types only"),
            std::string::npos);
  EXPECT_NE(PlanErrorOf(Parse("<clock><timer name='rtc' track='boot'/></clock>")).find("track 'boot'"),
            std::string::npos);
}

TEST(FirmwareDescriptors, ParsesTheQemuFormat) {
  auto d = ParseFirmwareDescriptor("60-edk2-x86_64.json", R"({
    "interface-types": ["uefi"],
    "mapping": {"device": "flash", "executable": {"filename": "/usr/share/OVMF/OVMF_CODE_4M.fd", "format": "raw"},
                "nvram-template": {"filename": "/usr/share/OVMF/OVMF_VARS_4M.fd", "format": "raw"}},
    "targets": [{"architecture": "x86_64", "machines": ["pc-i440fx-*", "pc-q35-*"]}],
    "features": ["acpi-s3", "amd-sev", "verbose-dynamic"]})");
  ASSERT_TRUE(d);
  const FirmwareDescriptor& b = BuiltinFirmwareDescriptors().back();
  EXPECT_EQ(d->code, b.code);
  EXPECT_EQ(d->vars_template, b.vars_template);
  EXPECT_EQ(d->machines, b.machines);
  EXPECT_EQ(d->features, b.features);
  EXPECT_FALSE(ParseFirmwareDescriptor("x.json", R"({"mapping": {}, "targets": [{"architecture": "aarch64"}]})"));
}

}  // namespace
}  // namespace qlaunch::qemu
