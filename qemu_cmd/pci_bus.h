// The bus/slot allocator of libvirt's PCI address assignment (pci_address.h): the buses with
// what each accepts (libvirt's connect flags), the chipset's own slots, and a pass over the
// devices that places each at its fixed address or the next free compatible slot, growing the bus
// set in a dry run. It knows devices only as Items; pci_address.cc makes them from each device's
// kind (pci_kind.h) and runs the passes, for a start and for a hotplug. Internal to qemu_cmd/.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu::pci_bus {

// libvirt's connect flags: what a device needs, and what a bus accepts.
enum : unsigned {
  kPciDev = 1u << 0,
  kPcieDev = 1u << 1,
  kRootPortConn = 1u << 2,
  kPcieToPciConn = 1u << 3,
  kPciBridgeConn = 1u << 4,
  kTypesMask = (1u << 5) - 1,
  kEndpoint = kPciDev | kPcieDev,
  kAutoAssign = 1u << 8,
  kAggregate = 1u << 9,  // several on one slot (pcie-root-ports at 0x2.0 .. 0x2.7)
};

enum class BusModel { kPciRoot, kPcieRoot, kPciBridge, kPcieToPciBridge, kRootPort };

// "pci-bridge", "pcie-pci-bridge", "pcie-root-port" for the buses a controller makes; "" for the roots.
const char* ModelDriver(BusModel m);
// What a PCI controller of that model needs of the bus it sits on.
unsigned ControllerFlags(BusModel m);

struct Addr {
  unsigned bus = 0, slot = 0, function = 0;
  bool multi = false;
};

// Who holds a function: a device of the plan, or a part of the chipset.
struct Owner {
  const PlannedDevice* dev = nullptr;
  const char* builtin = "";
};

struct Bus {
  BusModel model = BusModel::kRootPort;
  unsigned flags = 0;
  unsigned min_slot = 0, max_slot = 0;
  std::array<uint8_t, 32> functions{};
  std::array<bool, 32> aggregate{};
  std::array<std::array<Owner, 8>, 32> owners{};
  bool has_controller = false;
};

// One device that needs a PCI address, with what the passes learn about it.
struct Item {
  PlannedDevice* dev = nullptr;
  unsigned flags = 0;
  std::optional<Addr> fixed;   // from the XML, or set for good by a pass (chipset slots)
  std::optional<Addr> result;  // assigned by the current pass
  bool pci_controller = false;
  BusModel model = BusModel::kRootPort;
  unsigned index = 0;          // pci controllers: their index; usb2 controllers: the usb index
  int usb2_function = -1;      // ich9 ehci1/uhci1..3: the function libvirt gives it
};

// The buses of one assignment and the passes over its Items (libvirt's two-pass algorithm).
class Assigner {
 public:
  Assigner(const DeviceContext& ctx, std::deque<Item>* items) : ctx_(ctx), items_(*items) {}
  void Pass(bool dry_run, size_t nbuses);
  size_t nbuses() const { return buses_.size(); }
  const Bus& bus(size_t i) const { return buses_[i]; }
  Addr ReserveNext(unsigned flags, int function, Owner owner);

 private:
  static bool FullyReserved(const Bus& b);
  bool IsPiix3Usb(const Item& it) const;
  [[noreturn]] void Fail(Owner owner, const std::string& message) const;
  std::string Describe(Owner o) const;
  static bool Compatible(const Addr& a, unsigned bus_flags, unsigned dev_flags, bool from_config);
  std::string BusName(unsigned index) const;
  void Validate(const Addr& a, unsigned flags, bool from_config, Owner owner) const;
  void Reserve(Addr a, unsigned flags, bool from_config, Owner owner);
  // Adds the buses an address beyond the last bus needs (dry run only), as libvirt does.
  void Grow(Addr* a, unsigned flags, Owner owner);
  Addr NextAddr(unsigned flags, int function, Owner owner);
  bool SlotInUse(unsigned bus, unsigned slot) const { return buses_[bus].functions[slot] != 0; }
  // Places the primary video at `slot` of the root bus when it is free, else anywhere.
  void PrimaryVideo(unsigned slot, unsigned check_flags);
  void ChipsetPiix3();
  void ChipsetQ35();
  void Assign(Item* it, const Addr& a);
  bool Present(const Item& it) const { return it.fixed || it.result; }
  void AssignDevices();

  const DeviceContext& ctx_;
  std::deque<Item>& items_;
  std::vector<Bus> buses_;
  bool dry_run_ = true;
};

}  // namespace qlaunch::qemu::pci_bus
