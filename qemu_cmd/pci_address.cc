// Over 400 lines for a reason: this is one algorithm, libvirt's two-pass assignment
// (qemu_cmd/pci_address.h), whose passes share the Assigner's bus state; the driver table it
// places devices by is qemu_cmd/pci_kind.cc.
#include "qemu_cmd/pci_address.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>

#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

std::string ToHex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%x", v);
  return buf;
}

namespace {

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

struct Addr {
  unsigned bus = 0, slot = 0, function = 0;
  bool multi = false;
};

std::string AddrString(const Addr& a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0000:%02x:%02x.%x", a.bus, a.slot, a.function);
  return buf;
}

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

class Assigner {
 public:
  Assigner(const DeviceContext& ctx, std::deque<Item>* items) : ctx_(ctx), items_(*items) {}

  void Pass(bool dry_run, size_t nbuses) {
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

  size_t nbuses() const { return buses_.size(); }
  const Bus& bus(size_t i) const { return buses_[i]; }

  Addr ReserveNext(unsigned flags, int function, Owner owner) {
    Addr a = NextAddr(flags, function, owner);
    Reserve(a, flags, false, owner);
    return a;
  }

 private:
  static bool FullyReserved(const Bus& b) {
    for (unsigned s = b.min_slot; s <= b.max_slot; ++s)
      if (!b.functions[s]) return false;
    return true;
  }

  bool IsPiix3Usb(const Item& it) const {
    return !ctx_.q35 && it.dev && it.dev->driver == "piix3-usb-uhci" && it.index == 0;
  }

  [[noreturn]] void Fail(Owner owner, const std::string& message) const {
    if (owner.dev) throw DiagnosticError(PlanError(*ctx_.def, owner.dev->line, owner.dev->element, message));
    throw DiagnosticError(PlanError(*ctx_.def, 0, "devices", message));
  }

  std::string Describe(Owner o) const {
    if (!o.dev) return o.builtin;
    std::string s = "<" + o.dev->element + ">";
    if (o.dev->line > 0) s += " (" + ctx_.def->file + ":" + std::to_string(o.dev->line) + ")";
    return s;
  }

  static bool Compatible(const Addr& a, unsigned bus_flags, unsigned dev_flags, bool from_config) {
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

  std::string BusName(unsigned index) const {
    return index == 0 ? (ctx_.q35 ? "pcie.0" : "pci.0") : "pci." + std::to_string(index);
  }

  void Validate(const Addr& a, unsigned flags, bool from_config, Owner owner) const {
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

  void Reserve(Addr a, unsigned flags, bool from_config, Owner owner) {
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

  // Adds the buses an address beyond the last bus needs (dry run only), as libvirt does.
  void Grow(Addr* a, unsigned flags, Owner owner) {
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

  Addr NextAddr(unsigned flags, int function, Owner owner) {
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

  bool SlotInUse(unsigned bus, unsigned slot) const { return buses_[bus].functions[slot] != 0; }

  // Places the primary video at `slot` of the root bus when it is free, else anywhere.
  void PrimaryVideo(unsigned slot, unsigned check_flags) {
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

  void ChipsetPiix3() {
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

  void ChipsetQ35() {
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

  void Assign(Item* it, const Addr& a) {
    if (!dry_run_) it->result = a;
  }

  bool Present(const Item& it) const { return it.fixed || it.result; }

  void AssignDevices() {
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

  const DeviceContext& ctx_;
  std::deque<Item>& items_;
  std::vector<Bus> buses_;
  bool dry_run_ = true;
};

std::optional<unsigned> IndexAfter(const std::string& s, std::string_view prefix, std::string_view suffix = "") {
  if (!s.starts_with(prefix) || !s.ends_with(suffix) || s.size() < prefix.size() + suffix.size()) return std::nullopt;
  std::string digits = s.substr(prefix.size(), s.size() - prefix.size() - suffix.size());
  if (digits.empty()) return 0;
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 4) return std::nullopt;
  return static_cast<unsigned>(std::stoul(digits));
}

// The usb index of a USB controller: its id ("usb", "usb2") or, for companions, masterbus ("usb.0").
unsigned UsbIndex(const PlannedDevice& d) {
  for (const auto& [key, value] : d.props)
    if (key == "masterbus") return IndexAfter(value, "usb", ".0").value_or(0);
  return IndexAfter(d.id, "usb").value_or(0);
}

bool HasProp(const PlannedDevice& d, std::string_view key) {
  return std::any_of(d.props.begin(), d.props.end(), [&](const auto& p) { return p.first == key; });
}

Item MakeItem(const DeviceContext& ctx, PlannedDevice* d) {
  Item it;
  it.dev = d;
  PciKind kind = PciKindOf(d->driver);
  const unsigned pcie = (ctx.q35 ? kPcieDev : kPciDev) | kAutoAssign;
  switch (kind) {
    case PciKind::kConventional: it.flags = kPciDev | kAutoAssign; break;
    case PciKind::kExpress:
    case PciKind::kVirtio: it.flags = pcie; break;
    case PciKind::kRootPort: it.model = BusModel::kRootPort; break;
    case PciKind::kPcieToPciBridge: it.model = BusModel::kPcieToPciBridge; break;
    case PciKind::kPciBridge: it.model = BusModel::kPciBridge; break;
  }
  if (d->rank == PciRank::kPciController) {
    if (kind == PciKind::kConventional || kind == PciKind::kExpress || kind == PciKind::kVirtio)
      throw DiagnosticError(PlanError(*ctx.def, d->line, d->element, "'" + d->driver + "' is not a PCI controller"));
    std::optional<unsigned> index = IndexAfter(d->id, "pci.");
    if (!index || *index == 0)
      throw DiagnosticError(PlanError(*ctx.def, d->line, d->element, "PCI controller without an index (id '" + d->id + "')"));
    it.pci_controller = true;
    it.index = *index;
    it.flags = ControllerFlags(it.model);
  } else if (it.usb2_function = Usb2Function(d->driver); it.usb2_function >= 0 || d->driver == "piix3-usb-uhci") {
    it.index = UsbIndex(*d);
  }
  const domain::DeviceAddress& x = d->address;
  if (x.type == "pci" && (x.bus.value_or(0) || x.slot.value_or(0)))
    it.fixed = Addr{x.bus.value_or(0), x.slot.value_or(0), x.function.value_or(0), x.multifunction};
  return it;
}

}  // namespace

void AssignPciAddresses(const DeviceContext& ctx, std::vector<PlannedDevice>* devices) {
  std::deque<PlannedDevice> added;  // controllers the dry run adds (stable addresses)
  std::deque<Item> items;
  size_t max_index = 0;
  for (PlannedDevice& d : *devices) {
    if (!d.pci) continue;
    items.push_back(MakeItem(ctx, &d));
    if (items.back().pci_controller) {
      for (const Item& other : items)
        if (&other != &items.back() && other.pci_controller && other.index == items.back().index)
          throw DiagnosticError(PlanError(*ctx.def, d.line, d.element,
                                          "a second PCI controller with index " + std::to_string(other.index)));
      max_index = std::max<size_t>(max_index, items.back().index);
    }
  }
  if (items.empty()) return;

  Assigner assigner(ctx, &items);
  assigner.Pass(true, max_index + 1);
  if (ctx.q35 && max_index == 0 && assigner.nbuses() > 1) {
    // libvirt leaves one empty pcie-root-port for hotplug when it added the PCI controllers.
    assigner.ReserveNext(kPcieDev | kAutoAssign, -1, {nullptr, "a spare root port"});
  }
  for (size_t i = 1; i < assigner.nbuses(); ++i) {
    if (assigner.bus(i).has_controller) continue;
    BusModel model = assigner.bus(i).model;
    PlannedDevice& c = added.emplace_back();
    c.family = "controller";
    c.driver = ModelDriver(model);
    c.id = "pci." + std::to_string(i);
    c.pci = true;
    c.rank = PciRank::kPciController;
    c.element = "controller";
    Item it;
    it.dev = &c;
    it.pci_controller = true;
    it.model = model;
    it.index = static_cast<unsigned>(i);
    it.flags = ControllerFlags(model);
    items.push_back(it);
    assigner.ReserveNext(it.flags, -1, Owner{&c});  // may grow the bus set further
  }
  const size_t nbuses = assigner.nbuses();
  assigner.Pass(false, nbuses);

  // A device at function 0 of a slot with other functions in use is multifunction.
  for (Item& it : items) {
    std::optional<Addr>& a = it.fixed ? it.fixed : it.result;
    if (!a || a->function == 0) continue;
    for (Item& head : items) {
      std::optional<Addr>& h = head.fixed ? head.fixed : head.result;
      if (h && h->bus == a->bus && h->slot == a->slot && h->function == 0) h->multi = true;
    }
  }
  for (Item& it : items) {
    const Addr& a = it.fixed ? *it.fixed : *it.result;
    it.dev->slot = PciSlot{a.bus == 0 ? (ctx.q35 ? "pcie.0" : "pci.0") : "pci." + std::to_string(a.bus), a.slot,
                           a.function, a.multi};
    if (!it.pci_controller) continue;
    auto& props = it.dev->props;
    if (it.model == BusModel::kRootPort) {
      if (!HasProp(*it.dev, "chassis")) props.insert(props.begin(), {"chassis", std::to_string(it.index)});
      if (!HasProp(*it.dev, "port")) props.insert(props.begin(), {"port", "0x" + ToHex((a.slot << 3) + a.function)});
    } else if (it.model == BusModel::kPciBridge && !HasProp(*it.dev, "chassis_nr")) {
      props.insert(props.begin(), {"chassis_nr", std::to_string(it.index)});
    }
  }

  // The PCI controllers, old and added, come first in index order (libvirt's argv).
  std::vector<PlannedDevice> pci_controllers, rest;
  for (PlannedDevice& d : *devices)
    (d.pci && d.rank == PciRank::kPciController ? pci_controllers : rest).push_back(std::move(d));
  for (PlannedDevice& d : added) pci_controllers.push_back(std::move(d));
  std::stable_sort(pci_controllers.begin(), pci_controllers.end(), [](const PlannedDevice& a, const PlannedDevice& b) {
    return IndexAfter(a.id, "pci.").value_or(0) < IndexAfter(b.id, "pci.").value_or(0);
  });
  devices->clear();
  for (PlannedDevice& d : pci_controllers) devices->push_back(std::move(d));
  for (PlannedDevice& d : rest) devices->push_back(std::move(d));
}

namespace {

std::optional<unsigned> BusIndexOf(const std::string& bus) {
  if (bus == "pci.0" || bus == "pcie.0") return 0;
  return IndexAfter(bus, "pci.");
}

}  // namespace

void AssignHotplugPciAddress(const DeviceContext& ctx, const std::vector<PlannedDevice>& running,
                             PlannedDevice* device) {
  std::deque<PlannedDevice> copies;
  std::deque<Item> items;
  size_t max_index = 0;
  for (const PlannedDevice& r : running) {
    if (!r.slot) continue;
    std::optional<unsigned> bus = BusIndexOf(r.slot->bus);
    if (!bus) continue;  // not on a PCI bus qlaunch numbers
    PlannedDevice& c = copies.emplace_back();
    c.driver = r.driver;
    c.id = r.id;
    c.props = r.props;
    c.pci = true;
    c.rank = r.rank;
    const PciKind kind = PciKindOf(r.driver);
    if (kind == PciKind::kRootPort || kind == PciKind::kPcieToPciBridge || kind == PciKind::kPciBridge)
      c.rank = PciRank::kPciController;
    // Named by alias in a clash: its line is in another file (the running XML).
    c.element = (r.element.empty() ? "device" : r.element) + " alias='" + r.id + "'";
    c.address.type = "pci";
    c.address.bus = *bus;
    c.address.slot = r.slot->slot;
    c.address.function = r.slot->function;
    c.address.multifunction = r.slot->multifunction;
    items.push_back(MakeItem(ctx, &c));
    Item& it = items.back();
    it.fixed = Addr{*bus, r.slot->slot, r.slot->function, r.slot->multifunction};
    if (it.pci_controller) max_index = std::max<size_t>(max_index, it.index);
  }
  device->pci = true;
  items.push_back(MakeItem(ctx, device));
  Item& mine = items.back();
  if (mine.pci_controller)
    throw DiagnosticError(PlanError(*ctx.def, device->line, device->element,
                                    "a PCI controller cannot be added to a running domain"));
  Assigner assigner(ctx, &items);
  try {
    assigner.Pass(false, max_index + 1);
  } catch (const DiagnosticError& e) {
    if (e.diagnostics().empty() || e.diagnostics()[0].message.find("no free PCI slot") == std::string::npos) throw;
    throw DiagnosticError(PlanError(
        *ctx.def, device->line, device->element,
        std::string("no free hotpluggable PCI slot for this device in the running domain (") +
            (ctx.q35 ? "each PCI Express device needs an empty pcie-root-port; give the domain spare "
                       "<controller type='pci' model='pcie-root-port'/> elements before it starts"
                     : "pci.0 and its bridges are full") +
            ")"));
  }
  const Addr a = mine.fixed ? *mine.fixed : *mine.result;
  device->slot = PciSlot{a.bus == 0 ? (ctx.q35 ? "pcie.0" : "pci.0") : "pci." + std::to_string(a.bus), a.slot,
                         a.function, a.multi};
}

}  // namespace qlaunch::qemu
