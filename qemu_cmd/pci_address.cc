// libvirt's PCI address assignment (pci_address.h): each device made an Item by its kind
// (pci_kind.h: what it needs of a bus), the two passes run on the bus/slot allocator
// (pci_bus.h), the controllers the dry run added, and the addresses written back.
#include "qemu_cmd/pci_address.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>

#include "qemu_cmd/pci_bus.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

using namespace pci_bus;

std::string ToHex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%x", v);
  return buf;
}

namespace {

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
