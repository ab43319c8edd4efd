// The machine around the devices: <features>, <clock>, <pm>, <cpu> features and check,
// <sysinfo>/<os><smbios>, and UEFI firmware (<os firmware='efi'>, <loader>, <nvram>), rendered
// as libvirt 9.0 does (qemu_cmd/machine_plan.cc, qemu_cmd/firmware_plan.cc).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

struct MachineArgs {
  std::vector<DeviceArg> before_machine;  // e.g. the pflash -blockdevs
  std::vector<std::pair<std::string, std::string>> machine_props;  // appended to -machine
  std::vector<std::string> cpu_suffix;    // appended to -cpu as ",x=on" pieces
  std::vector<DeviceArg> after_cpu;       // -bios, -global driver=cfi.pflash01,property=secure,...
  std::vector<DeviceArg> after_uuid;      // -smbios
  std::vector<DeviceArg> after_monitor;   // -rtc, -global kvm-pit..., -no-hpet
  std::vector<DeviceArg> before_boot;     // -no-acpi, -global ICH9-LPC.disable_s3=...
};

// Throws DiagnosticError (file:line, element) for what libvirt 9.0 refuses too.
MachineArgs PlanMachine(const DeviceContext& ctx);

// ---- firmware (qemu_cmd/firmware_plan.cc) --------------------------------------------------

// A QEMU firmware descriptor (/usr/share/qemu/firmware/*.json, docs/interop/firmware.json):
// what libvirt reads to pick the code and the vars template for <os firmware='efi'>.
struct FirmwareDescriptor {
  std::string name;                   // file name: "60-edk2-x86_64.json" (libvirt's order)
  std::string interface;              // "uefi" | "bios"
  std::string device;                 // "flash" | "memory"
  std::string code, vars_template;    // executable / nvram-template filenames
  std::vector<std::string> machines;  // x86_64 machine globs: "pc-q35-*"
  std::vector<std::string> features;  // "secure-boot", "requires-smm", "enrolled-keys", ...
  bool Has(const std::string& feature) const;
};

// Debian 12's ovmf descriptors (the files its `ovmf` package installs), in libvirt's order.
const std::vector<FirmwareDescriptor>& BuiltinFirmwareDescriptors();
// One descriptor file's JSON; nullopt when it is not for x86_64.
std::optional<FirmwareDescriptor> ParseFirmwareDescriptor(const std::string& name, const std::string& json);

// What the firmware of a domain is.
struct FirmwarePlan {
  enum class Kind { kDefault, kRom, kPflash } kind = Kind::kDefault;
  std::string code;                   // -bios / pflash0 file
  bool code_readonly = false;
  std::string nvram;                  // pflash1 file; "" when there is none
  std::string nvram_template;         // what a missing nvram is copied from ("" = unknown)
  bool nvram_default = false;         // nvram is the per-domain default path (qlaunch's to create)
  bool secure = false;                // -global driver=cfi.pflash01,property=secure,value=on
  bool smm = false;                   // the firmware needs smm=on
};

// Where qlaunch keeps a domain's vars when the XML names no <nvram> (libvirt:
// /var/lib/libvirt/qemu/nvram/NAME_VARS.fd).
inline constexpr const char* kNvramDir = "/var/lib/qlaunch/nvram";
std::string DefaultNvramPath(const std::string& domain_name);

// The firmware as libvirt 9.0 picks it. `nvram_path` (DeviceResources::nvram_path) overrides the
// vars path when not empty. Throws DiagnosticError for what libvirt refuses.
FirmwarePlan PlanFirmware(const domain::DomainDef& def, bool q35, const std::string& nvram_path,
                          const std::vector<FirmwareDescriptor>& descriptors = BuiltinFirmwareDescriptors());

}  // namespace qlaunch::qemu
