// <features>, <clock>, <pm>, <cpu> modes and features, <sysinfo>, firmware: the options
// libvirt 9.0 renders for them (checked with `virsh domxml-to-native`), in its places.
#include "qemu_cmd/machine_plan.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"
#include "qemu_cmd/planner.h"

namespace qlaunch::qemu {

namespace {

using OrderedJson = nlohmann::ordered_json;

std::string OnOff(bool on) { return on ? "on" : "off"; }

// <cpu mode> pieces: host-passthrough/maximum say whether the CPU is migratable; each
// <feature> is on (force, require) or off (disable, forbid); 'optional' is left to the model
// (libvirt decides it from the host's CPU; qlaunch cannot, without asking the host).
void CpuModeSuffix(const domain::DomainDef& def, std::vector<std::string>* out) {
  const domain::CpuDef& cpu = def.cpu;
  if (cpu.mode == "host-passthrough" || cpu.mode == "maximum")
    out->push_back(",migratable=" + OnOff(cpu.migratable.value_or(true)));
  for (const domain::CpuFeature& f : cpu.features) {
    if (f.policy == "force" || f.policy == "require") out->push_back("," + f.name + "=on");
    else if (f.policy == "disable" || f.policy == "forbid") out->push_back("," + f.name + "=off");
  }
}

// libvirt's order: timers (kvmclock, hv-time), apic eoi, pvspinlock, hyperv, kvm hidden.
void CpuFeatureSuffix(const DeviceContext& ctx, std::vector<std::string>* out) {
  const domain::DomainDef& def = *ctx.def;
  for (const domain::Timer& t : def.clock.timers) {
    if (t.name == "kvmclock" && t.present) out->push_back(",kvmclock=" + OnOff(*t.present));
    if (t.name == "hypervclock" && t.present.value_or(false)) out->push_back(",hv-time=on");
  }
  const domain::Features& f = def.features;
  if (f.apic_eoi) out->push_back(",kvm-pv-eoi=" + OnOff(*f.apic_eoi));
  if (f.pvspinlock) out->push_back(",kvm-pv-unhalt=" + OnOff(*f.pvspinlock));
  const domain::HypervFeatures& hv = f.hyperv;
  if (hv.present && hv.mode == "passthrough") {
    out->push_back(",hv-passthrough=on");
  } else if (hv.present) {
    static constexpr const char* kOrder[] = {"relaxed", "vapic", "spinlocks", "vpindex", "runtime",
                                             "synic", "stimer", "reset", "vendor_id", "frequencies",
                                             "reenlightenment", "tlbflush", "ipi", "evmcs", "avic"};
    for (const char* name : kOrder) {
      if (!hv.Flag(name).value_or(false)) continue;
      const std::string n = name;
      if (n == "spinlocks") {
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%x", hv.spinlocks_retries.value_or(0));
        out->push_back(std::string(",hv-spinlocks=") + hex);
      } else if (n == "vendor_id") {
        out->push_back(",hv-vendor-id=" + hv.vendor_id);  // no ',' (the parser refuses it)
      } else {
        if (n == "avic" && !ctx.caps->VersionAtLeast(6, 2))
          for (const domain::HypervFlag& flag : hv.flags)
            if (flag.name == "avic")
              throw DiagnosticError(PlanError(def, flag.line, "avic", "this QEMU has no hv-avic (QEMU 6.2 or newer)"));
        out->push_back(",hv-" + n + "=on");
        if (n == "stimer" && hv.stimer_direct.value_or(false)) out->push_back(",hv-stimer-direct=on");
      }
    }
  }
  if (f.kvm_hidden.value_or(false)) out->push_back(",kvm=off");
}

// -rtc, the PIT's lost tick policy, the HPET.
void ClockArgs(const domain::DomainDef& def, MachineArgs* out) {
  KeyValueBuilder rtc;
  rtc.Add("base", std::string_view(def.clock.offset));
  if (const domain::Timer* t = def.clock.Find("rtc")) {
    if (t->track == "boot") throw DiagnosticError(PlanError(def, t->line, "timer", "unsupported rtc timer track 'boot'"));
    if (t->track == "guest") rtc.Add("clock", "vm");
    else if (t->track == "wall") rtc.Add("clock", "host");
    else if (t->track == "realtime") rtc.Add("clock", "rt");
    if (t->tickpolicy == "catchup") rtc.Add("driftfix", "slew");
  }
  out->after_monitor.push_back({"-rtc", rtc.str()});
  // libvirt renders the kvm-pit global for TCG too (QEMU then has no kvm-pit and ignores it).
  if (const domain::Timer* t = def.clock.Find("pit")) {
    if (t->tickpolicy.empty() || t->tickpolicy == "delay")
      out->after_monitor.push_back({"-global", "kvm-pit.lost_tick_policy=delay"});
    else if (t->tickpolicy == "discard")
      out->after_monitor.push_back({"-global", "kvm-pit.lost_tick_policy=discard"});
  }
  if (const domain::Timer* t = def.clock.Find("hpet"))
    if (t->present && !*t->present) out->after_monitor.push_back({"-no-hpet", ""});
}

// -smbios type=0..3 and 11 from <sysinfo type='smbios'>, for <os><smbios mode='sysinfo'/>.
void SmbiosArgs(const domain::DomainDef& def, MachineArgs* out) {
  if (def.sysinfo.smbios_mode != "sysinfo" || !def.sysinfo.present) return;
  struct Section {
    const char* name;
    unsigned type;
    std::vector<const char*> keys;  // libvirt's order
  };
  static const Section kSections[] = {
      {"bios", 0, {"vendor", "version", "date", "release"}},
      {"system", 1, {"manufacturer", "product", "version", "serial", "uuid", "sku", "family"}},
      {"baseBoard", 2, {"manufacturer", "product", "version", "serial", "asset", "location"}},
      {"chassis", 3, {"manufacturer", "version", "serial", "asset", "sku"}},
  };
  for (const Section& s : kSections) {
    KeyValueBuilder kv;
    kv.Add("type", s.type);
    bool any = false;
    for (const char* key : s.keys) {
      const domain::SysInfoEntry* last = nullptr;  // a repeated entry: libvirt keeps the last
      for (const domain::SysInfoEntry& e : def.sysinfo.entries)
        if (e.section == s.name && e.name == key) last = &e;
      if (!last) continue;
      kv.Add(key, std::string_view(last->value));
      any = true;
    }
    if (any) out->after_uuid.push_back({"-smbios", kv.str()});
  }
  KeyValueBuilder oem;
  oem.Add("type", 11u);
  bool any = false;
  for (const domain::SysInfoEntry& e : def.sysinfo.entries)
    if (e.section == "oemStrings") {
      oem.Add("value", std::string_view(e.value));
      any = true;
    }
  if (any) out->after_uuid.push_back({"-smbios", oem.str()});
}

std::string PflashBlockdev(const std::string& file, unsigned n, bool storage, bool read_only) {
  const std::string node = "libvirt-pflash" + std::to_string(n);
  OrderedJson j;
  if (storage) {
    j["driver"] = "file";
    j["filename"] = file;
    j["node-name"] = node + "-storage";
    j["auto-read-only"] = true;
    j["discard"] = "unmap";
  } else {
    j["node-name"] = node + "-format";
    j["read-only"] = read_only;
    j["driver"] = "raw";
    j["file"] = node + "-storage";
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void FirmwareArgs(const DeviceContext& ctx, MachineArgs* out) {
  const domain::DomainDef& def = *ctx.def;
  const std::string nvram = ctx.opts ? ctx.opts->devices.nvram_path : std::string();
  FirmwarePlan fw = PlanFirmware(def, ctx.q35, nvram);
  if (fw.kind == FirmwarePlan::Kind::kRom) {
    out->after_cpu.push_back({"-bios", fw.code});
    return;
  }
  if (fw.kind != FirmwarePlan::Kind::kPflash) return;
  out->before_machine.push_back({"-blockdev", PflashBlockdev(fw.code, 0, true, false)});
  out->before_machine.push_back({"-blockdev", PflashBlockdev(fw.code, 0, false, fw.code_readonly)});
  if (!fw.nvram.empty()) {
    out->before_machine.push_back({"-blockdev", PflashBlockdev(fw.nvram, 1, true, false)});
    out->before_machine.push_back({"-blockdev", PflashBlockdev(fw.nvram, 1, false, false)});
  }
  if (fw.smm && !def.features.smm) out->machine_props.push_back({"smm", "on"});
  out->machine_props.push_back({"pflash0", "libvirt-pflash0-format"});
  if (!fw.nvram.empty()) out->machine_props.push_back({"pflash1", "libvirt-pflash1-format"});
  if (fw.secure) out->after_cpu.push_back({"-global", "driver=cfi.pflash01,property=secure,value=on"});
}

}  // namespace

MachineArgs PlanMachine(const DeviceContext& ctx) {
  const domain::DomainDef& def = *ctx.def;
  MachineArgs out;
  const domain::Features& f = def.features;
  if (f.vmport) out.machine_props.push_back({"vmport", OnOff(*f.vmport)});
  if (f.smm) out.machine_props.push_back({"smm", OnOff(*f.smm)});
  if (f.ioapic_driver == "kvm") out.machine_props.push_back({"kernel_irqchip", "on"});
  if (f.ioapic_driver == "qemu") out.machine_props.push_back({"kernel_irqchip", "split"});
  FirmwareArgs(ctx, &out);

  CpuModeSuffix(def, &out.cpu_suffix);
  CpuFeatureSuffix(ctx, &out.cpu_suffix);
  SmbiosArgs(def, &out);
  ClockArgs(def, &out);

  // libvirt 9.0 on x86: no <acpi/> is -no-acpi; UEFI needs ACPI.
  if (!f.acpi) {
    if (def.os.firmware.firmware == "efi" || (!def.os.firmware.loader.empty() && def.os.firmware.loader_type == "pflash"))
      throw DiagnosticError(PlanError(def, f.line ? f.line : def.os.line, "features",
                                      "UEFI requires ACPI on this architecture (add <acpi/> to <features>)"));
    out.before_boot.push_back({"-no-acpi", ""});
  }
  const char* pm = ctx.q35 ? "ICH9-LPC" : "PIIX4_PM";
  if (def.pm.suspend_to_mem)
    out.before_boot.push_back({"-global", std::string(pm) + ".disable_s3=" + (*def.pm.suspend_to_mem ? "0" : "1")});
  if (def.pm.suspend_to_disk)
    out.before_boot.push_back({"-global", std::string(pm) + ".disable_s4=" + (*def.pm.suspend_to_disk ? "0" : "1")});
  return out;
}

}  // namespace qlaunch::qemu
