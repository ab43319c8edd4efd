// <features>, <clock>, <pm>, <sysinfo>: the machine around the devices. The table of what is
// understood also covers the machine parts of <os> (firmware, loader, nvram, smbios, bootmenu,
// parsed in parse_os.cc) and of <cpu> (match, check, model fallback, features: parse_cpu.cc).
#include <algorithm>
#include <cctype>

#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

namespace {

constexpr EnumName<bool> kOnOff[] = {{"on", true}, {"off", false}};

std::optional<bool> StateAttr(ParseContext& ctx, const xmlNode* node) {
  return EnumAttr(ctx, node, "state", kOnOff);
}

// <hyperv> children in the order libvirt 9.0 renders them (its enum order).
constexpr std::string_view kHypervFlags[] = {"relaxed", "vapic", "spinlocks", "vpindex", "runtime",
                                             "synic", "stimer", "reset", "vendor_id", "frequencies",
                                             "reenlightenment", "tlbflush", "ipi", "evmcs", "avic"};

HypervFeatures ParseHyperv(ParseContext& ctx, const xmlNode* node) {
  HypervFeatures hv;
  hv.present = true;
  hv.line = NodeLine(node);
  if (auto mode = NodeAttr(node, "mode")) {
    if (*mode != "custom" && *mode != "passthrough")
      FailInvalidValue(ctx, node, "mode", *mode, "expected custom|passthrough");
    hv.mode = *mode;
  }
  for (const xmlNode* child : ElementChildren(node)) {
    std::string name = NodeName(child);
    if (std::find(std::begin(kHypervFlags), std::end(kHypervFlags), name) == std::end(kHypervFlags))
      continue;  // reported by the understood table
    for (const HypervFlag& f : hv.flags)
      if (f.name == name) ctx.Fail(child, "more than one <" + name + "> in <hyperv>");
    std::optional<bool> state = StateAttr(ctx, child);
    if (!state) ctx.Fail(child, "missing 'state' attribute for HyperV Enlightenment feature '" + name + "'");
    hv.flags.push_back({name, *state, NodeLine(child)});
    if (name == "spinlocks" && *state) {
      std::optional<unsigned> retries = UIntAttr(ctx, child, "retries");
      if (!retries) ctx.Fail(child, "missing HyperV spinlock retry count");
      if (*retries < 0xFFF) ctx.Fail(child, "HyperV spinlock retry count must be at least 4095");
      hv.spinlocks_retries = retries;
    }
    if (name == "stimer")
      if (const xmlNode* direct = UniqueChild(ctx, child, "direct")) {
        hv.stimer_direct = StateAttr(ctx, direct);
        if (!hv.stimer_direct) ctx.Fail(direct, "missing 'state' attribute for HyperV stimer direct");
      }
    if (name == "vendor_id" && *state) {
      std::string value = NodeAttr(child, "value").value_or("");
      if (value.empty()) ctx.Fail(child, "missing 'value' attribute for HyperV feature 'vendor_id'");
      if (value.size() > 12) ctx.Fail(child, "HyperV vendor_id value must not be more than 12 characters");
      if (value.find(',') != std::string::npos)  // as libvirt: its -cpu value is not escaped
        ctx.Fail(child, "HyperV vendor_id value must not contain ','");
      hv.vendor_id = value;
    }
  }
  return hv;
}

Features ParseFeatures(ParseContext& ctx, const xmlNode* node) {
  Features f;
  f.present = true;
  f.line = NodeLine(node);
  f.acpi = UniqueChild(ctx, node, "acpi") != nullptr;
  f.pae = UniqueChild(ctx, node, "pae") != nullptr;
  if (const xmlNode* apic = UniqueChild(ctx, node, "apic")) {
    f.apic = true;
    f.apic_eoi = EnumAttr(ctx, apic, "eoi", kOnOff);
  }
  if (const xmlNode* smm = UniqueChild(ctx, node, "smm")) {
    f.smm = StateAttr(ctx, smm).value_or(true);  // <smm/> alone: on
    f.smm_line = NodeLine(smm);
  }
  if (const xmlNode* vmport = UniqueChild(ctx, node, "vmport")) f.vmport = StateAttr(ctx, vmport).value_or(true);
  if (const xmlNode* pv = UniqueChild(ctx, node, "pvspinlock")) f.pvspinlock = StateAttr(ctx, pv).value_or(true);
  if (const xmlNode* kvm = UniqueChild(ctx, node, "kvm"))
    if (const xmlNode* hidden = UniqueChild(ctx, kvm, "hidden")) {
      f.kvm_hidden = StateAttr(ctx, hidden);
      if (!f.kvm_hidden) ctx.Fail(hidden, "missing 'state' attribute for KVM feature 'hidden'");
    }
  if (const xmlNode* ioapic = UniqueChild(ctx, node, "ioapic")) {
    std::string driver = NodeAttr(ioapic, "driver").value_or("");
    if (driver != "kvm" && driver != "qemu") FailInvalidValue(ctx, ioapic, "driver", driver, "expected kvm|qemu");
    f.ioapic_driver = driver;
  }
  if (const xmlNode* hyperv = UniqueChild(ctx, node, "hyperv")) f.hyperv = ParseHyperv(ctx, hyperv);
  return f;
}

constexpr EnumName<std::string_view> kTickPolicies[] = {
    {"delay", "delay"}, {"catchup", "catchup"}, {"merge", "merge"}, {"discard", "discard"}};
constexpr EnumName<std::string_view> kTracks[] = {
    {"boot", "boot"}, {"guest", "guest"}, {"wall", "wall"}, {"realtime", "realtime"}};

// nullopt: a timer libvirt knows that qlaunch does not support (reported).
std::optional<Timer> ParseTimer(ParseContext& ctx, const xmlNode* node) {
  Timer t;
  t.line = NodeLine(node);
  t.name = RequiredAttr(ctx, node, "name");
  if (Classify(ctx, node, "timer name", t.name, {"rtc", "pit", "hpet", "kvmclock", "hypervclock"},
               {"platform", "tsc", "armvtimer"}) == Support::kNo)
    return std::nullopt;
  t.present = YesNoAttr(ctx, node, "present");
  if (auto policy = EnumAttr(ctx, node, "tickpolicy", kTickPolicies)) t.tickpolicy = std::string(*policy);
  if (auto track = EnumAttr(ctx, node, "track", kTracks)) {
    if (t.name != "rtc") ctx.Fail(node, "timer attribute 'track' is only valid for name='rtc'");
    t.track = std::string(*track);
  }
  // What QEMU cannot do (libvirt 9.0 refuses the same when it builds the command line).
  if (t.name == "pit" && t.tickpolicy == "merge") ctx.Fail(node, "unsupported pit tickpolicy 'merge'");
  if (t.name == "rtc" && (t.tickpolicy == "merge" || t.tickpolicy == "discard"))
    ctx.Fail(node, "unsupported rtc timer tickpolicy '" + t.tickpolicy + "'");
  return t;
}

Clock ParseClock(ParseContext& ctx, const xmlNode* node) {
  Clock c;
  c.line = NodeLine(node);
  c.offset = NodeAttr(node, "offset").value_or("utc");
  if (Classify(ctx, node, "clock offset", c.offset, {"utc", "localtime"}, {"variable", "timezone", "absolute"}) ==
      Support::kNo) {
    c.offset = "utc";
    return c;
  }
  for (const xmlNode* timer : ElementChildren(node, "timer")) {
    std::optional<Timer> t = ParseTimer(ctx, timer);
    if (!t) continue;
    if (c.Find(t->name)) ctx.Fail(timer, "more than one timer named '" + t->name + "'");
    c.timers.push_back(std::move(*t));
  }
  return c;
}

PowerManagement ParsePm(ParseContext& ctx, const xmlNode* node) {
  PowerManagement pm;
  pm.line = NodeLine(node);
  if (const xmlNode* mem = UniqueChild(ctx, node, "suspend-to-mem")) pm.suspend_to_mem = YesNoAttr(ctx, mem, "enabled");
  if (const xmlNode* disk = UniqueChild(ctx, node, "suspend-to-disk"))
    pm.suspend_to_disk = YesNoAttr(ctx, disk, "enabled");
  return pm;
}

// The entry names libvirt accepts per section (in the order it renders them).
const std::vector<std::string_view>& SectionNames(const std::string& section) {
  static const std::vector<std::string_view> bios{"vendor", "version", "date", "release"};
  static const std::vector<std::string_view> system{"manufacturer", "product", "version", "serial",
                                                    "uuid", "sku", "family"};
  static const std::vector<std::string_view> board{"manufacturer", "product", "version", "serial", "asset",
                                                   "location"};
  static const std::vector<std::string_view> chassis{"manufacturer", "version", "serial", "asset", "sku"};
  static const std::vector<std::string_view> none;
  if (section == "bios") return bios;
  if (section == "system") return system;
  if (section == "baseBoard") return board;
  if (section == "chassis") return chassis;
  return none;
}

std::string NormalUuid(std::string_view uuid) {
  std::string out;
  for (char ch : uuid)
    if (ch != '-' && !std::isspace(static_cast<unsigned char>(ch)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

void ParseSysInfo(ParseContext& ctx, const xmlNode* node, const DomainDef& def, SysInfo* out) {
  out->present = true;
  out->line = NodeLine(node);
  bool board_seen = false;
  for (const xmlNode* section : ElementChildren(node)) {
    std::string name = NodeName(section);
    if (name == "baseBoard") {
      if (board_seen) continue;  // libvirt renders only the first
      board_seen = true;
    } else if (name != "bios" && name != "system" && name != "chassis" && name != "oemStrings") {
      continue;  // reported by the understood table
    }
    for (const xmlNode* entry : ElementChildren(section, "entry")) {
      SysInfoEntry e;
      e.section = name;
      e.line = NodeLine(entry);
      e.value = std::string(TrimSpace(NodeText(entry)));
      if (name != "oemStrings") {
        e.name = RequiredAttr(ctx, entry, "name");
        const auto& names = SectionNames(name);
        if (std::find(names.begin(), names.end(), e.name) == names.end())
          ctx.Fail(entry, "unknown " + name + " entry '" + e.name + "'");
        if (name == "system" && e.name == "uuid" && !def.uuid.empty() && NormalUuid(e.value) != NormalUuid(def.uuid))
          ctx.Fail(entry, "UUID mismatch between <uuid> and <sysinfo>");
      }
      out->entries.push_back(std::move(e));
    }
  }
}

}  // namespace

void ParseMachine(ParseContext& ctx, const xmlNode* domain, DomainDef* def) {
  if (const xmlNode* node = UniqueChild(ctx, domain, "features")) def->features = ParseFeatures(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, domain, "clock")) def->clock = ParseClock(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, domain, "pm")) def->pm = ParsePm(ctx, node);
  for (const xmlNode* node : ElementChildren(domain, "sysinfo")) {
    std::string type = RequiredAttr(ctx, node, "type");
    if (Classify(ctx, node, "sysinfo type", type, {"smbios"}, {"fwcfg"}) == Support::kNo) continue;
    if (def->sysinfo.present) ctx.Fail(node, "more than one <sysinfo type='smbios'>");
    ParseSysInfo(ctx, node, *def, &def->sysinfo);
  }
  // <os><smbios mode>: 'sysinfo' renders the <sysinfo>; 'host' (copy the host's tables) is
  // reported; 'emulate' is QEMU's default.
  if (const xmlNode* os = UniqueChild(ctx, domain, "os"))
    if (const xmlNode* smbios = UniqueChild(ctx, os, "smbios")) {
      std::string mode = RequiredAttr(ctx, smbios, "mode");
      def->sysinfo.smbios_line = NodeLine(smbios);
      if (Classify(ctx, smbios, "smbios mode", mode, {"sysinfo", "emulate"}, {"host"}) == Support::kYes)
        def->sysinfo.smbios_mode = mode;
    }
  if (def->sysinfo.smbios_mode == "sysinfo" && !def->sysinfo.present)
    throw DiagnosticError(Diagnostic{Severity::kError, ctx.file(), def->sysinfo.smbios_line, "smbios",
                                     "smbios mode 'sysinfo' requires a <sysinfo type='smbios'> element"});
}

std::span<const UnderstoodElement> UnderstoodMachineElements() {
  static constexpr UnderstoodElement kElements[] = {
      {"domain/features", ""},
      {"domain/features/acpi", ""},
      {"domain/features/apic", "eoi"},
      {"domain/features/pae", ""},
      {"domain/features/smm", "state"},
      {"domain/features/vmport", "state"},
      {"domain/features/pvspinlock", "state"},
      {"domain/features/kvm", ""},
      {"domain/features/kvm/hidden", "state"},
      {"domain/features/ioapic", "driver"},
      {"domain/features/hyperv", "mode"},
      {"domain/features/hyperv/relaxed", "state"},
      {"domain/features/hyperv/vapic", "state"},
      {"domain/features/hyperv/spinlocks", "state retries"},
      {"domain/features/hyperv/vpindex", "state"},
      {"domain/features/hyperv/runtime", "state"},
      {"domain/features/hyperv/synic", "state"},
      {"domain/features/hyperv/stimer", "state"},
      {"domain/features/hyperv/stimer/direct", "state"},
      {"domain/features/hyperv/reset", "state"},
      {"domain/features/hyperv/vendor_id", "state value"},
      {"domain/features/hyperv/frequencies", "state"},
      {"domain/features/hyperv/reenlightenment", "state"},
      {"domain/features/hyperv/tlbflush", "state"},
      {"domain/features/hyperv/ipi", "state"},
      {"domain/features/hyperv/evmcs", "state"},
      {"domain/features/hyperv/avic", "state"},
      {"domain/clock", "offset"},
      {"domain/clock/timer", "name present tickpolicy track"},
      {"domain/pm", ""},
      {"domain/pm/suspend-to-mem", "enabled"},
      {"domain/pm/suspend-to-disk", "enabled"},
      {"domain/sysinfo", "type"},
      {"domain/sysinfo/bios", ""},
      {"domain/sysinfo/bios/entry", "name"},
      {"domain/sysinfo/system", ""},
      {"domain/sysinfo/system/entry", "name"},
      {"domain/sysinfo/baseBoard", ""},
      {"domain/sysinfo/baseBoard/entry", "name"},
      {"domain/sysinfo/chassis", ""},
      {"domain/sysinfo/chassis/entry", "name"},
      {"domain/sysinfo/oemStrings", ""},
      {"domain/sysinfo/oemStrings/entry", ""},
      // <os>: the firmware (parse_os.cc; <os firmware> itself is in understood.cc's table)
      {"domain/os/loader", "readonly secure type"},
      {"domain/os/nvram", "template"},
      {"domain/os/firmware", ""},
      {"domain/os/firmware/feature", "enabled name"},
      {"domain/os/smbios", "mode"},
      {"domain/os/bootmenu", "enable"},
      // <cpu> features (parse_cpu.cc; <cpu match check migratable> and <model fallback> are in
      // understood.cc's table, which lists the parents first)
      {"domain/cpu/feature", "policy name"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
