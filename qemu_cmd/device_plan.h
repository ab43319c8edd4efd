// The devices of a domain as the planner decides them, family by family, before they become
// argv: each family's planner (qemu_cmd/<family>_plan.cc) appends PlannedDevices in the order
// libvirt 9.0 renders them; AssignPciAddresses (qemu_cmd/pci_address.h) then places every PCI
// device as libvirt does; RenderDevicePlan turns the result into options. Pure: what the
// launcher prepared on the host (taps, sockets, ports, the UEFI vars copy) comes in as
// DeviceResources.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/caps.h"

namespace qlaunch::qemu {

struct PlanOptions;
struct MemoryLayout;

// What `qlaunch start` made on the host for the devices before planning. Empty (the default,
// and what domxml-to-native uses): the argv asks QEMU to do it alone where it can.
struct DeviceResources {
  std::vector<int> net_fds;          // per <interface> (document order): the tap fd QEMU inherits, -1: none
  std::vector<std::string> net_taps; // per <interface>: the tap's name, "" when there is none
  std::map<size_t, int> chardev_fds; // index in devices.chardevs -> listening socket fd QEMU inherits
  std::map<size_t, int> graphics_ports;  // index in devices.graphics -> the port picked for autoport
  std::string channel_dir;           // unix channels without a path get their socket here
  std::string nvram_path;            // the domain's copy of the UEFI vars (os firmware='efi')
};

// libvirt's order of PCI address assignment (qemuDomainAssignDevicePCISlots): a device of a
// lower rank gets its address first.
enum class PciRank {
  kPrimaryVideo,   // the first <video>: pcie.0 / pci.0 slot 1
  kPciController,  // pcie-root-port, pci-bridge, pcie-to-pci-bridge, ...
  kNet,
  kSound,
  kController,     // usb, scsi, virtio-serial, sata (not ide: built in)
  kDisk,           // virtio disks
  kBalloon,
  kRng,
  kWatchdog,
  kVideo,          // secondary videos
  kInput,          // virtio input
  kMemory,         // virtio-mem
  kOther,
};

struct DeviceArg {
  std::string opt;    // "-blockdev", "-netdev", "-chardev", "-object", "-audiodev", "-vnc", ...
  std::string value;  // already rendered (escaped)
};

struct PciSlot {
  std::string bus;    // "pcie.0", "pci.0", "pci.3"
  unsigned slot = 0, function = 0;
  bool multifunction = false;
};

struct PlannedDevice {
  std::string family;                  // "disk", "controller", "net", "chardev", "graphics", "misc"
  std::vector<DeviceArg> host_args;    // rendered before the -device (backends, displays)
  std::string driver;                  // QEMU device type; "" when there is no -device
  std::string id;                      // QEMU id (libvirt's alias: virtio-disk0, net0, usb, ...)
  std::vector<std::pair<std::string, std::string>> props;  // key, value (unescaped) after id
  std::vector<DeviceArg> after_args;   // rendered after the -device (e.g. -serial chardev:...)
  // PCI placement: pci devices get bus/addr from AssignPciAddresses, or keep address.
  bool pci = false;
  PciRank rank = PciRank::kOther;
  int pci_order = 0;                   // within a rank: libvirt's order (lower first; ties keep argv order)
  domain::DeviceAddress address;       // as the XML gives it (type "" = none)
  std::optional<PciSlot> slot;         // the result
  std::string element;                 // for diagnostics: "interface", "disk", ...
  int line = 0;

  // A PCI device placed at `rank`, at the XML's address (if any).
  void AtPci(PciRank r, const domain::DeviceAddress& a) {
    pci = true;
    rank = r;
    address = a;
  }
};

// Inputs every family planner reads.
struct DeviceContext {
  const domain::DomainDef* def = nullptr;
  const QemuCaps* caps = nullptr;
  const PlanOptions* opts = nullptr;
  bool q35 = false;                    // the machine is a q35 (else i440fx "pc")
  const MemoryLayout* memory = nullptr;  // the planned memory (its devices), when known
  // memdev id -> its backend's options, rendered (with a thread-context it is the first user of)
  const std::map<std::string, std::vector<DeviceArg>>* memory_backend_args = nullptr;
};

// True for "q35" and "pc-q35-*".
bool IsQ35(const std::string& machine);

// The whole device plan of a domain, in argv order, PCI addresses assigned. Throws
// DiagnosticError (file:line, element) for what cannot be planned.
std::vector<PlannedDevice> PlanDevices(const DeviceContext& ctx);

// Options for the planned devices, in order.
std::vector<std::string> RenderDevicePlan(const std::vector<PlannedDevice>& devices);

// ---- the families (each in its own file) ---------------------------------------------------
void PlanControllers(const DeviceContext& ctx, std::vector<PlannedDevice>* out);  // controller_plan.cc
void PlanDiskDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);  // disk_plan.cc
void PlanNetDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);   // net_plan.cc
void PlanCharDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);  // chardev_plan.cc
void PlanGraphicsDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);  // graphics_plan.cc
void PlanMiscDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);  // misc_device_plan.cc
void PlanMemoryDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);  // memory_device_plan.cc

}  // namespace qlaunch::qemu
