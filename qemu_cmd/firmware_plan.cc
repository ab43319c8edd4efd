// The firmware of a domain as libvirt 9.0 picks it: <loader type='rom'> is -bios; a pflash
// <loader> (or <os firmware='efi'>, chosen from the firmware descriptors) is pflash0, with the
// domain's vars (a copy of the descriptor's template) as pflash1.
#include <fnmatch.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "qemu_cmd/machine_plan.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

[[noreturn]] void Fail(const domain::DomainDef& def, int line, const char* element, const std::string& message) {
  throw DiagnosticError(PlanError(def, line, element, message));
}

// "pc-q35-*" matches the machine; the bare aliases "q35" and "pc" (which libvirt would expand
// to pc-q35-X.Y / pc-i440fx-X.Y) match their family's globs.
bool MachineMatches(const std::string& glob, const std::string& machine, bool q35) {
  std::string m = machine.empty() ? "pc" : machine;
  if (m == "q35") m = "pc-q35-0";
  if (m == "pc") m = "pc-i440fx-0";
  (void)q35;
  return ::fnmatch(glob.c_str(), m.c_str(), 0) == 0;
}

// libvirt's qemuFirmwareMatchDomain, for what qlaunch's model holds.
bool Matches(const FirmwareDescriptor& d, const domain::DomainDef& def, bool q35) {
  const domain::Firmware& fw = def.os.firmware;
  if (d.interface != "uefi" || d.device != "flash") return false;
  if (std::none_of(d.machines.begin(), d.machines.end(),
                   [&](const std::string& g) { return MachineMatches(g, def.os.machine, q35); }))
    return false;
  const bool secure = d.Has("secure-boot");
  if (fw.secure_boot && *fw.secure_boot != secure) return false;
  if (fw.enrolled_keys && *fw.enrolled_keys != d.Has("enrolled-keys")) return false;
  if (fw.loader_secure && *fw.loader_secure && !secure) return false;
  if (fw.loader_secure && !*fw.loader_secure && secure) return false;
  if (d.Has("amd-sev-es") || d.Has("intel-tdx")) return false;  // need <launchSecurity>
  return true;
}

}  // namespace

bool FirmwareDescriptor::Has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

const std::vector<FirmwareDescriptor>& BuiltinFirmwareDescriptors() {
  static const std::vector<FirmwareDescriptor> list = {
      {"40-edk2-x86_64-secure-enrolled.json", "uefi", "flash", "/usr/share/OVMF/OVMF_CODE_4M.ms.fd",
       "/usr/share/OVMF/OVMF_VARS_4M.ms.fd", {"pc-q35-*"},
       {"acpi-s3", "amd-sev", "enrolled-keys", "requires-smm", "secure-boot", "verbose-dynamic"}},
      {"50-edk2-x86_64-secure.json", "uefi", "flash", "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd",
       "/usr/share/OVMF/OVMF_VARS_4M.fd", {"pc-q35-*"},
       {"acpi-s3", "amd-sev", "requires-smm", "secure-boot", "verbose-dynamic"}},
      {"60-edk2-x86_64.json", "uefi", "flash", "/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd",
       {"pc-i440fx-*", "pc-q35-*"}, {"acpi-s3", "amd-sev", "verbose-dynamic"}},
  };
  return list;
}

std::optional<FirmwareDescriptor> ParseFirmwareDescriptor(const std::string& name, const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  FirmwareDescriptor d;
  d.name = name;
  for (const auto& i : j.value("interface-types", nlohmann::json::array()))
    if (i == "uefi" || i == "bios") d.interface = i.get<std::string>();
  const nlohmann::json& mapping = j.at("mapping");
  d.device = mapping.value("device", "");
  if (mapping.contains("executable")) d.code = mapping["executable"].value("filename", "");
  if (mapping.contains("nvram-template")) d.vars_template = mapping["nvram-template"].value("filename", "");
  if (mapping.contains("filename")) d.code = mapping.value("filename", "");  // device 'memory'
  bool x86 = false;
  for (const auto& t : j.value("targets", nlohmann::json::array())) {
    if (t.value("architecture", "") != "x86_64") continue;
    x86 = true;
    for (const auto& m : t.value("machines", nlohmann::json::array())) d.machines.push_back(m.get<std::string>());
  }
  for (const auto& f : j.value("features", nlohmann::json::array())) d.features.push_back(f.get<std::string>());
  if (!x86) return std::nullopt;
  return d;
}

std::string DefaultNvramPath(const std::string& domain_name) {
  return std::string(kNvramDir) + "/" + domain_name + "_VARS.fd";
}

FirmwarePlan PlanFirmware(const domain::DomainDef& def, bool q35, const std::string& nvram_path,
                          const std::vector<FirmwareDescriptor>& descriptors) {
  const domain::Firmware& fw = def.os.firmware;
  FirmwarePlan p;
  const int loader_line = fw.loader_line ? fw.loader_line : fw.line;
  std::string template_path = fw.nvram_template;
  bool with_nvram = false;

  if (fw.firmware == "efi") {
    // Autoselection: libvirt refuses a loader that says what the descriptors decide.
    if (fw.loader_readonly) Fail(def, loader_line, "loader", "loader attribute 'readonly' cannot be specified when firmware autoselection is enabled");
    if (!fw.loader_type.empty()) Fail(def, loader_line, "loader", "loader attribute 'type' cannot be specified when firmware autoselection is enabled");
    if (!fw.loader.empty()) Fail(def, loader_line, "loader", "a loader path cannot be given with firmware autoselection (os firmware='efi')");
    const FirmwareDescriptor* chosen = nullptr;
    for (const FirmwareDescriptor& d : descriptors)
      if (Matches(d, def, q35)) {
        chosen = &d;
        break;
      }
    if (!chosen) Fail(def, fw.line, "os", "Unable to find any firmware to satisfy 'efi'");
    p.kind = FirmwarePlan::Kind::kPflash;
    p.code = chosen->code;
    p.code_readonly = true;
    p.smm = chosen->Has("requires-smm");
    p.secure = chosen->Has("secure-boot") && p.smm;
    if (p.smm && def.features.smm && !*def.features.smm)
      Fail(def, def.features.smm_line, "smm", "domain has SMM turned off but chosen firmware (" + chosen->name + ") requires it");
    if (template_path.empty()) template_path = chosen->vars_template;
    with_nvram = true;
  } else if (!fw.loader.empty()) {
    if (fw.loader_type != "pflash") {  // libvirt's default loader type is rom: -bios
      if (!fw.nvram.empty()) Fail(def, fw.nvram_line, "nvram", "an <nvram> needs a loader of type='pflash'");
      p.kind = FirmwarePlan::Kind::kRom;
      p.code = fw.loader;
      return p;
    }
    p.kind = FirmwarePlan::Kind::kPflash;
    p.code = fw.loader;
    p.code_readonly = fw.loader_readonly.value_or(false);
    p.secure = fw.loader_secure.value_or(false);
    with_nvram = p.code_readonly || !fw.nvram.empty();
    if (template_path.empty())  // the vars that go with this code, as the descriptors say
      for (const FirmwareDescriptor& d : descriptors)
        if (d.code == fw.loader && !d.vars_template.empty()) {
          template_path = d.vars_template;
          break;
        }
  } else {
    if (fw.loader_secure.value_or(false))
      Fail(def, loader_line, "loader", "secure boot needs a pflash loader (os firmware='efi' or a loader path)");
    return p;  // firmware='bios' or nothing: QEMU's own SeaBIOS
  }

  if (p.secure) {
    if (!q35) Fail(def, loader_line, "loader", "Secure boot is supported with q35 machine types only");
    if (!p.smm && !def.features.smm.value_or(false))
      Fail(def, loader_line, "loader", "Secure boot requires SMM feature enabled");
  }
  if (with_nvram) {
    p.nvram_template = template_path;
    if (!nvram_path.empty()) p.nvram = nvram_path;
    else if (!fw.nvram.empty()) p.nvram = fw.nvram;
    else p.nvram = DefaultNvramPath(def.name);
    p.nvram_default = fw.nvram.empty();
  }
  return p;
}

}  // namespace qlaunch::qemu
