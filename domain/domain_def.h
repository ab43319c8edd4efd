// DomainDef: the typed model of the libvirt domain XML subset qlaunch understands.
// Pure data; no QEMU knowledge. Filled by ParseDomainXml (domain/parser.h), checked by
// ValidateDomain (domain/validate.h). Sizes are bytes (libvirt rounds input up to whole KiB,
// so do we). Every element that can be wrong carries the line it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/id_set.h"
#include "domain/chardev_def.h"
#include "domain/controller_def.h"
#include "domain/disk_def.h"
#include "domain/graphics_def.h"
#include "domain/machine_def.h"
#include "domain/misc_device_def.h"
#include "domain/net_def.h"

namespace qlaunch::domain {

enum class MemAccess { kDefault, kShared, kPrivate };
enum class MemSource { kDefault, kAnonymous, kFile, kMemfd };
enum class AllocMode { kDefault, kImmediate, kOnDemand };
enum class NumaMode { kStrict, kPreferred, kInterleave, kRestrictive };
enum class Placement { kDefault, kStatic, kAuto };

struct HugePage {
  uint64_t size_bytes = 0;          // 0: the host's default hugepage size (<hugepages/> alone)
  std::optional<IdSet> guest_nodes; // nodeset='...': guest cells this size applies to
  int line = 0;
};

struct NumaCell {
  unsigned id = 0;
  IdSet cpus;
  uint64_t memory_bytes = 0;
  MemAccess access = MemAccess::kDefault;
  std::optional<bool> discard;
  int line = 0;
};

struct MemNode {
  unsigned cellid = 0;
  NumaMode mode = NumaMode::kStrict;
  IdSet nodeset;  // host nodes
  int line = 0;
};

struct NumaTune {
  bool present = false;
  std::optional<NumaMode> mode;     // <memory mode=...>
  std::optional<IdSet> nodeset;     // <memory nodeset=...> (host nodes)
  Placement placement = Placement::kDefault;
  int memory_line = 0;
  std::vector<MemNode> memnodes;
  int line = 0;
};

struct MemoryBacking {
  bool present = false;
  bool hugepages = false;           // <hugepages> present
  std::vector<HugePage> pages;      // <page> children; empty with hugepages=true means default size
  bool nosharepages = false;
  bool locked = false;
  MemSource source = MemSource::kDefault;
  MemAccess access = MemAccess::kDefault;
  AllocMode allocation = AllocMode::kDefault;
  std::optional<unsigned> threads;  // <allocation threads=...>
  bool discard = false;
  int line = 0;
  int hugepages_line = 0;
  int source_line = 0;
  int allocation_line = 0;
};

// One <vcpus><vcpu> of libvirt's live XML (qlaunch dumpxml writes it after setvcpus): whether
// the vCPU runs, and whether it came by hotplug, so that a restore or a migration destination
// starts the boot vCPUs with -smp and plugs the others as the running QEMU had them.
struct VcpuState {
  unsigned id = 0;
  bool enabled = false;
  bool hotpluggable = false;
  unsigned order = 0;  // 0: none given
  int line = 0;
};

struct Vcpu {
  unsigned count = 1;
  std::optional<unsigned> current;
  Placement placement = Placement::kDefault;
  std::optional<IdSet> cpuset;      // host CPUs
  std::vector<VcpuState> states;    // <vcpus>, in document order; empty when absent
  int states_line = 0;
  int line = 0;
};


struct VcpuPin {
  unsigned vcpu = 0;
  IdSet cpuset;
  int line = 0;
};

struct CpuTune {
  std::optional<IdSet> emulatorpin;  // host CPUs
  int emulatorpin_line = 0;
  std::vector<VcpuPin> vcpupins;
};

struct CpuTopology {
  unsigned sockets = 1, dies = 1, clusters = 1, cores = 1, threads = 1;
  int line = 0;
};

struct CpuDef {
  std::string mode;   // custom | host-model | host-passthrough | maximum; empty when absent
  std::string model;  // <model>
  std::optional<CpuTopology> topology;
  std::string check;                 // <cpu check='none|partial|full'>
  std::string match;                 // <cpu match='exact|minimum|strict'>
  std::vector<CpuFeature> features;  // <feature policy name>
  std::string fallback;              // <model fallback='allow|forbid'>
  std::optional<bool> migratable;    // host-passthrough / maximum: <cpu migratable=...>
  std::vector<NumaCell> cells;  // in document order
  int line = 0;
  int numa_line = 0;
};

struct OsDef {
  std::string type = "hvm";
  std::string arch;
  std::string machine;
  std::string kernel, initrd, cmdline;
  std::vector<std::string> boot;  // <boot dev=...> in order: hd, cdrom, network, fd
  Firmware firmware;               // firmware=, <loader>, <nvram>
  std::optional<bool> bootmenu;    // <bootmenu enable=...>
  int line = 0;
};

struct MemoryDevice {
  std::string model;  // dimm | nvdimm | virtio-mem
  uint64_t size_bytes = 0;
  std::optional<unsigned> node;  // target guest node
  std::optional<IdSet> source_nodemask;
  std::optional<uint64_t> source_pagesize_bytes;
  std::string source_path;  // nvdimm
  std::optional<unsigned> slot;
  std::optional<uint64_t> base;
  // virtio-mem: <target><block> and <requested> (what is plugged at start), and its PCI <address>.
  std::optional<uint64_t> block_bytes, requested_bytes;
  DeviceAddress pci_address;
  MemAccess access = MemAccess::kDefault;
  std::optional<bool> discard;
  int line = 0;
};

struct Devices {
  std::string emulator;
  int emulator_line = 0;
  std::vector<MemoryDevice> memory;
  std::optional<MemBalloon> memballoon;  // <memballoon>, when present (absent: libvirt's virtio)
  std::vector<Disk> disks;
  std::vector<Controller> controllers;
  std::vector<Interface> interfaces;
  std::vector<CharDev> chardevs;  // serial, console and channel, in document order
  std::vector<Graphics> graphics;
  std::vector<Video> videos;
  std::vector<Input> inputs;
  std::vector<Sound> sounds;
  std::vector<RedirDev> redirdevs;
  std::vector<Rng> rngs;
  std::vector<Watchdog> watchdogs;
  bool panic = false;  // <panic model='isa'/>: the pvpanic device, how a guest reports a crash
  int panic_line = 0;
};

// <on_poweroff>, <on_reboot>, <on_crash>: what happens when the guest powers off, reboots or
// crashes. "destroy", "restart" or "preserve" (libvirt's rename-restart and coredump-* map to
// restart / destroy). `qlaunch run` acts on them; `start` renders what QEMU can do alone.
struct Lifecycle {
  std::string on_poweroff = "destroy", on_reboot = "restart", on_crash = "destroy";
  int poweroff_line = 0, reboot_line = 0, crash_line = 0;
};

// <seclabel model='dac'>: who QEMU runs as (libvirt's DAC security driver). Other models
// (selinux, apparmor) are reported as unsupported.
struct SecLabel {
  bool present = false;
  std::string type;     // static | dynamic | none
  std::string label;    // "USER:GROUP" (or "+UID:+GID") for type='static'
  bool relabel = true;  // relabel='no': leave the owners of the domain's files alone
  int line = 0;
};

struct DomainDef {
  std::string file;  // path the XML came from (for diagnostics)
  std::string type;  // kvm | qemu
  std::string name;
  int name_line = 0;
  std::string uuid;
  uint64_t memory_bytes = 0;
  int memory_line = 0;
  std::optional<uint64_t> current_memory_bytes;
  int current_memory_line = 0;
  std::optional<uint64_t> max_memory_bytes;
  unsigned max_memory_slots = 0;
  int max_memory_line = 0;
  Vcpu vcpu;
  CpuTune cputune;
  CpuDef cpu;
  NumaTune numatune;
  MemoryBacking memory_backing;
  OsDef os;
  Devices devices;
  SecLabel seclabel;
  Lifecycle lifecycle;
  Features features;
  Clock clock;
  PowerManagement pm;
  SysInfo sysinfo;
  std::vector<Diagnostic> warnings;  // unsupported elements etc., found while parsing
};

}  // namespace qlaunch::domain
