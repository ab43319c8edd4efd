// <features>, <clock>, <pm>, <sysinfo>, and the firmware parts of <os> (parsed by
// domain/parse_machine.cc and domain/parse_os.cc).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qlaunch::domain {

// One <hyperv> child with state='on|off'.
struct HypervFlag {
  std::string name;            // relaxed, vapic, spinlocks, vpindex, runtime, synic, stimer, ...
  bool on = false;
  int line = 0;
};

struct HypervFeatures {
  bool present = false;
  std::string mode = "custom"; // custom | passthrough
  std::vector<HypervFlag> flags;  // in document order
  std::optional<unsigned> spinlocks_retries;  // <spinlocks state='on' retries=...>
  std::optional<bool> stimer_direct;          // <stimer><direct state=...>
  std::string vendor_id;                      // <vendor_id state='on' value=...>
  int line = 0;

  // The flag's state, nullopt when the element is absent.
  std::optional<bool> Flag(const std::string& name) const {
    for (const HypervFlag& f : flags)
      if (f.name == name) return f.on;
    return std::nullopt;
  }
};

struct Features {
  bool present = false;
  bool acpi = false, apic = false, pae = false;
  std::optional<bool> apic_eoi;  // <apic eoi=...>
  std::optional<bool> smm;       // <smm state=...>
  std::optional<bool> vmport;    // <vmport state=...>
  std::optional<bool> pvspinlock;  // <pvspinlock state=...>
  std::optional<bool> kvm_hidden;  // <kvm><hidden state=...>
  std::string ioapic_driver;       // <ioapic driver='kvm|qemu'>
  HypervFeatures hyperv;
  int line = 0;
  int smm_line = 0;
};

struct Timer {
  std::string name;            // rtc | pit | hpet | kvmclock | hypervclock
  std::optional<bool> present;
  std::string tickpolicy;      // delay | catchup | merge | discard
  std::string track;           // rtc only: boot | guest | wall | realtime
  int line = 0;
};

struct Clock {
  std::string offset = "utc";  // utc | localtime
  std::vector<Timer> timers;
  int line = 0;

  const Timer* Find(const std::string& name) const {
    for (const Timer& t : timers)
      if (t.name == name) return &t;
    return nullptr;
  }
};

struct PowerManagement {
  std::optional<bool> suspend_to_mem, suspend_to_disk;
  int line = 0;
};

// One <sysinfo type='smbios'> entry: section bios|system|baseBoard|chassis|oemStrings.
struct SysInfoEntry {
  std::string section;
  std::string name;            // "" for oemStrings
  std::string value;
  int line = 0;
};

struct SysInfo {
  bool present = false;        // <sysinfo type='smbios'>
  std::vector<SysInfoEntry> entries;  // document order (only the first <baseBoard>)
  std::string smbios_mode;     // <os><smbios mode='sysinfo|emulate'/>
  int line = 0;
  int smbios_line = 0;
};

struct Firmware {
  std::string firmware;        // <os firmware='efi'|'bios'>; "" = none given
  std::string loader;          // <loader> path
  std::optional<bool> loader_readonly, loader_secure;
  std::string loader_type;     // rom | pflash
  std::string nvram;           // <nvram> path ("" = the per-domain copy qlaunch keeps)
  std::string nvram_template;
  // <os><firmware><feature enabled name='secure-boot|enrolled-keys'/>
  std::optional<bool> secure_boot, enrolled_keys;
  int line = 0;
  int loader_line = 0;
  int nvram_line = 0;
};

struct CpuFeature {
  std::string name;
  std::string policy;          // force | require | optional | disable | forbid
  int line = 0;
};

}  // namespace qlaunch::domain
