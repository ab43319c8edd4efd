// The bus/slot allocator (pci_bus.h).
#include "qemu_cmd/pci_bus.h"

#include <algorithm>
#include <cstdio>

#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu::pci_bus {

namespace {

std::string AddrString(const Addr& a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0000:%02x:%02x.%x", a.bus, a.slot, a.function);
  return buf;
}

void SetModel(Bus* bus, BusModel model) {
  bus->model = model;
  switch (model) {
    case BusModel::kPciRoot:
      bus->flags = kAutoAssign | kPciDev | kPciBridgeConn, bus->min_slot = 1, bus->max_slot = 31;
      break;
    case BusModel::kPcieRoot:  // no auto-assignment of endpoints: they go behind root ports
      bus->flags = kPcieDev | kRootPortConn, bus->min_slot = 1, bus->max_slot = 31;
      break;
    case BusModel::kPciBridge:
    case BusModel::kPcieToPciBridge:  // slot 0 is the SHPC's
      bus->flags = kAutoAssign | kPciDev | kPciBridgeConn, bus->min_slot = 1, bus->max_slot = 31;
      break;
    case BusModel::kRootPort:
      bus->flags = kAutoAssign | kPcieDev | kPcieToPciConn, bus->min_slot = 0, bus->max_slot = 0;
      break;
  }
}

}  // namespace

const char* ModelDriver(BusModel m) {
  switch (m) {
    case BusModel::kPciBridge: return "pci-bridge";
    case BusModel::kPcieToPciBridge: return "pcie-pci-bridge";
    case BusModel::kRootPort: return "pcie-root-port";
    default: return "";
  }
}

unsigned ControllerFlags(BusModel m) {
  switch (m) {
    case BusModel::kRootPort: return kRootPortConn | kAggregate;
    case BusModel::kPcieToPciBridge: return kPcieToPciConn;
    case BusModel::kPciBridge: return kPciBridgeConn;
    default: return 0;
  }
}

void Assigner::Pass(bool dry_run, size_t nbuses) {
  dry_run_ = dry_run;
  buses_.assign(nbuses, Bus{});
  SetModel(&buses_[0], ctx_.q35 ? BusModel::kPcieRoot : BusModel::kPciRoot);
  buses_[0].has_controller = true;
  for (Item& it : items_) {
    it.result.reset();
    if (it.pci_controller && it.index < nbuses) {
      SetModel(&buses_[it.index], it.model);
      buses_[it.index].has_controller = true;
    }
  }
  for (size_t i = 1; i < nbuses; ++i)
    if (!buses_[i].has_controller) SetModel(&buses_[i], ctx_.q35 ? BusModel::kRootPort : BusModel::kPciBridge);

  for (Item& it : items_)
    if (it.fixed && !IsPiix3Usb(it)) Reserve(*it.fixed, it.flags, true, Owner{it.dev});
  if (ctx_.q35) ChipsetQ35(); else ChipsetPiix3();
  if (dry_run_ && !ctx_.q35) {
    // A spare slot for a future pci-bridge, as libvirt keeps one.
    bool full = std::all_of(buses_.begin(), buses_.end(), [](const Bus& b) { return FullyReserved(b); });
    if (!full) ReserveNext(kPciDev | kAutoAssign, -1, Owner{nullptr, "a spare slot"});
  }
  AssignDevices();
}

Addr Assigner::ReserveNext(unsigned flags, int function, Owner owner) {
  Addr a = NextAddr(flags, function, owner);
  Reserve(a, flags, false, owner);
  return a;
}

bool Assigner::FullyReserved(const Bus& b) {
  for (unsigned s = b.min_slot; s <= b.max_slot; ++s)
    if (!b.functions[s]) return false;
  return true;
}

bool Assigner::IsPiix3Usb(const Item& it) const {
  return !ctx_.q35 && it.dev && it.dev->driver == "piix3-usb-uhci" && it.index == 0;
}

void Assigner::Fail(Owner owner, const std::string& message) const {
  if (owner.dev) throw DiagnosticError(PlanError(*ctx_.def, owner.dev->line, owner.dev->element, message));
  throw DiagnosticError(PlanError(*ctx_.def, 0, "devices", message));
}

std::string Assigner::Describe(Owner o) const {
  if (!o.dev) return o.builtin;
  std::string s = "<" + o.dev->element + ">";
  if (o.dev->line > 0) s += " (" + ctx_.def->file + ":" + std::to_string(o.dev->line) + ")";
  return s;
}

bool Assigner::Compatible(const Addr& a, unsigned bus_flags, unsigned dev_flags, bool from_config) {
  (void)a;
  if (from_config) {
    // An address from the XML may put a PCI device on a PCIe slot and the other way round.
    if (bus_flags & kEndpoint) bus_flags |= kEndpoint;
    if (dev_flags & kPciBridgeConn) dev_flags |= kPciDev;
  } else if ((dev_flags & kAutoAssign) && !(bus_flags & kAutoAssign)) {
    return false;
  }
  return (dev_flags & bus_flags & kTypesMask) != 0;
}

std::string Assigner::BusName(unsigned index) const {
  return index == 0 ? (ctx_.q35 ? "pcie.0" : "pci.0") : "pci." + std::to_string(index);
}

void Assigner::Validate(const Addr& a, unsigned flags, bool from_config, Owner owner) const {
  const std::string where = "PCI address " + AddrString(a);
  if (a.bus >= buses_.size())
    Fail(owner, "invalid " + where + ": only PCI buses up to " + std::to_string(buses_.size() - 1) +
                    " are available (add <controller type='pci'> elements for more)");
  const Bus& b = buses_[a.bus];
  if (!Compatible(a, b.flags, flags, from_config))
    Fail(owner, "the device at " + where + " cannot be plugged into " + BusName(a.bus) + " (a " +
                    std::string(b.model == BusModel::kPcieRoot ? "pcie-root" : b.model == BusModel::kPciRoot ? "pci-root"
                                                                                      : ModelDriver(b.model)) +
                    ")");
  if (a.slot < b.min_slot || a.slot > b.max_slot)
    Fail(owner, "invalid " + where + ": the slot must be from " + std::to_string(b.min_slot) + " to " +
                    std::to_string(b.max_slot) + " on " + BusName(a.bus));
}

void Assigner::Reserve(Addr a, unsigned flags, bool from_config, Owner owner) {
  if (dry_run_) Grow(&a, flags, owner);
  Validate(a, flags, from_config, owner);
  Bus& b = buses_[a.bus];
  if (b.functions[a.slot] & (1u << a.function)) {
    Owner other = b.owners[a.slot][a.function];
    // A chipset function reserved after the device that took it: the device is at fault.
    if (!owner.dev && other.dev) std::swap(owner, other);
    Fail(owner, "PCI address " + AddrString(a) + " is already used by " + Describe(other));
  }
  if (!b.functions[a.slot] && (flags & kAggregate)) b.aggregate[a.slot] = true;
  b.functions[a.slot] |= static_cast<uint8_t>(1u << a.function);
  b.owners[a.slot][a.function] = owner;
}

void Assigner::Grow(Addr* a, unsigned flags, Owner owner) {
  if (a->bus < buses_.size()) return;
  size_t add = a->bus - buses_.size() + 1;
  BusModel model;
  bool need_pcie_to_pci = false;
  if (flags & kPciDev) {
    model = BusModel::kPciBridge;
    need_pcie_to_pci = std::none_of(buses_.begin(), buses_.end(), [](const Bus& b) { return b.flags & kPciBridgeConn; });
    if (need_pcie_to_pci && add == 1) {
      ++add;  // a pcie-root-port to hold the pcie-to-pci-bridge, then the bridge
      ++a->bus;
    }
  } else if (flags & kPcieDev) {
    model = BusModel::kRootPort;
  } else if (flags & kRootPortConn) {
    Fail(owner, "no free slot on pcie.0 for another pcie-root-port (it cannot be added automatically)");
  } else {
    Fail(owner, "no PCI bus can take this device, and none can be added automatically");
  }
  size_t i = buses_.size();
  buses_.resize(buses_.size() + add);
  if (need_pcie_to_pci) {
    SetModel(&buses_[i], BusModel::kRootPort);
    buses_[i++].flags = kPcieToPciConn;  // only the bridge goes there
    SetModel(&buses_[i++], BusModel::kPcieToPciBridge);
  }
  for (; i < buses_.size(); ++i) SetModel(&buses_[i], model);
}

Addr Assigner::NextAddr(unsigned flags, int function, Owner owner) {
  Addr a;
  a.function = function < 0 ? 0 : function;
  for (a.bus = 0; a.bus < buses_.size(); ++a.bus) {
    const Bus& b = buses_[a.bus];
    if (!Compatible(a, b.flags, flags, false)) continue;
    for (a.slot = b.min_slot; a.slot <= b.max_slot; ++a.slot) {
      uint8_t used = b.functions[a.slot];
      if (!used) return a;
      if ((flags & kAggregate) && b.aggregate[a.slot]) {
        if (!(used & (1u << a.function))) return a;
        if (function < 0) {
          for (; a.function < 8; ++a.function)
            if (!(used & (1u << a.function))) return a;
          a.function = 0;
        }
      }
    }
  }
  if (!dry_run_) Fail(owner, "no free PCI slot left for this device");
  a.bus = static_cast<unsigned>(buses_.size());
  Grow(&a, flags, owner);
  a.slot = buses_[a.bus].min_slot;
  return a;
}

void Assigner::PrimaryVideo(unsigned slot, unsigned check_flags) {
  for (Item& it : items_) {
    if (it.dev->rank != PciRank::kPrimaryVideo) continue;
    if (it.fixed) return;
    Addr a{0, slot, 0};
    Validate(a, check_flags, true, Owner{it.dev});
    if (SlotInUse(0, slot)) {
      Assign(&it, ReserveNext(it.flags, -1, Owner{it.dev}));
    } else {
      Reserve(a, check_flags, true, Owner{it.dev});
      it.fixed = a;
    }
    return;
  }
}

void Assigner::ChipsetPiix3() {
  const unsigned flags = kAutoAssign | kPciDev;
  for (Item& it : items_) {
    if (!IsPiix3Usb(it)) continue;
    Addr want{0, 1, 2};
    if (it.fixed && (it.fixed->bus || it.fixed->slot != 1 || it.fixed->function != 2))
      Fail(Owner{it.dev}, "the PIIX3 USB controller at index 0 must have PCI address 0000:00:01.2");
    it.fixed = want;
    Reserve(want, flags, true, Owner{it.dev});
  }
  Reserve(Addr{0, 1, 1}, flags, true, Owner{nullptr, "the PIIX3 IDE controller"});
  Reserve(Addr{0, 1, 0}, flags, true, Owner{nullptr, "the PIIX3 ISA bridge"});
  Reserve(Addr{0, 1, 3}, flags, true, Owner{nullptr, "the PIIX3 power management bridge"});
  PrimaryVideo(2, flags);
}

void Assigner::ChipsetQ35() {
  const unsigned flags = kPcieDev;
  Reserve(Addr{0, 0x1f, 2}, flags, true, Owner{nullptr, "the ICH9 SATA controller"});
  for (Item& it : items_) {
    if (it.fixed || !it.dev || it.dev->driver != "ich9-usb-uhci1") continue;
    // The first USB2 sets go where real Q35 hardware has them: 00:1d.0, then 00:1a.0.
    for (unsigned slot : {0x1du, 0x1au}) {
      if (SlotInUse(0, slot)) continue;
      Addr a{0, slot, 0, true};
      Reserve(a, flags, true, Owner{it.dev});
      it.fixed = a;
      break;
    }
  }
  Reserve(Addr{0, 0x1f, 0}, flags, true, Owner{nullptr, "the ICH9 LPC/ISA bridge"});
  Reserve(Addr{0, 0x1f, 3}, flags, true, Owner{nullptr, "the ICH9 SMBus controller"});
  PrimaryVideo(1, flags);
  if (!SlotInUse(0, 0x1b)) {
    // ICH9 HD audio sits at 00:1b.0 on real hardware.
    for (Item& it : items_) {
      if (it.fixed || it.dev->driver != "ich9-intel-hda") continue;
      Addr a{0, 0x1b, 0};
      Reserve(a, flags, true, Owner{it.dev});
      it.fixed = a;
      break;
    }
  }
}

void Assigner::Assign(Item* it, const Addr& a) {
  if (!dry_run_) it->result = a;
}

void Assigner::AssignDevices() {
  std::vector<Item*> order;
  for (Item& it : items_) order.push_back(&it);
  std::stable_sort(order.begin(), order.end(), [](const Item* a, const Item* b) {
    if (a->dev->rank != b->dev->rank) return a->dev->rank < b->dev->rank;
    if (a->pci_controller && b->pci_controller) return a->index < b->index;
    return a->dev->pci_order < b->dev->pci_order;
  });
  for (Item* it : order) {
    if (Present(*it)) continue;
    Owner owner{it->dev};
    if (it->usb2_function < 0) {
      Assign(it, ReserveNext(it->flags, -1, owner));
      continue;
    }
    // USB2 companions share the slot of their set: ehci1 function 7, uhci1..3 functions 0..2.
    const Item* mate = nullptr;
    for (const Item& other : items_)
      if (&other != it && other.usb2_function >= 0 && other.index == it->index && Present(other)) {
        mate = &other;
        break;
      }
    if (mate) {
      Addr a = mate->fixed ? *mate->fixed : *mate->result;
      a.function = static_cast<unsigned>(it->usb2_function);
      a.multi = it->usb2_function == 0;
      Reserve(a, it->flags, true, owner);
      it->fixed = a;
    } else {
      Addr a = ReserveNext(it->flags, it->usb2_function, owner);
      a.multi = it->usb2_function == 0;
      Assign(it, a);
    }
  }
}

}  // namespace qlaunch::qemu::pci_bus
