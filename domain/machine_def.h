// <features>, <clock>, <pm>, <sysinfo>, and the firmware parts of <os> (parsed by
// domain/parse_machine.cc).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qlaunch::domain {

struct HypervFeatures {
  bool present = false;
  std::optional<bool> relaxed, vapic, vpindex, synic, stimer, reset, frequencies;
  std::optional<unsigned> spinlocks_retries;  // <spinlocks state='on' retries=...>
  int line = 0;
};

struct Features {
  bool acpi = false, apic = false, pae = false;
  std::optional<bool> smm;     // <smm state=...>
  std::optional<bool> vmport;  // <vmport state=...>
  HypervFeatures hyperv;
  int line = 0;
};

struct Timer {
  std::string name;            // rtc | pit | hpet | kvmclock | hypervclock | tsc
  std::optional<bool> present;
  std::string tickpolicy;      // delay | catchup | merge | discard
  int line = 0;
};

struct Clock {
  std::string offset = "utc";  // utc | localtime
  std::vector<Timer> timers;
  int line = 0;
};

struct PowerManagement {
  std::optional<bool> suspend_to_mem, suspend_to_disk;
  int line = 0;
};

struct SysInfo {
  bool present = false;        // <sysinfo type='smbios'>
  // (section, name) -> value: ("bios","vendor"), ("system","manufacturer"), ...
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> entries;
  std::string smbios_mode;     // <os><smbios mode='sysinfo|host|emulate'/>
  int line = 0;
};

struct Firmware {
  std::string firmware;        // <os firmware='efi'|'bios'>; "" = bios
  std::string loader;          // <loader> path
  std::optional<bool> loader_readonly, loader_secure;
  std::string loader_type;     // rom | pflash
  std::string nvram;           // <nvram> path ("" = the per-domain copy qlaunch keeps)
  std::string nvram_template;
  int line = 0;
};

struct CpuFeature {
  std::string name;
  std::string policy;          // force | require | optional | disable | forbid
  int line = 0;
};

}  // namespace qlaunch::domain
