#include "qemu_cmd/controller_plan.h"

#include <algorithm>

#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

using domain::Controller;

[[noreturn]] void Fail(const domain::DomainDef& def, int line, const std::string& message) {
  throw DiagnosticError(PlanError(def, line, "controller", message));
}

bool Exists(const std::vector<EffectiveController>& list, const std::string& type, unsigned index) {
  return std::any_of(list.begin(), list.end(),
                     [&](const EffectiveController& c) { return c.def.type == type && *c.def.index == index; });
}

// libvirt's virDomainControllerInsertPreAlloced: controllers of one type stay together, in
// index order; a type not seen yet goes to the end.
void Insert(std::vector<EffectiveController>* list, EffectiveController c) {
  auto at = list->end();
  for (auto it = list->end(); it != list->begin();) {
    --it;
    if (it->def.type != c.def.type) continue;
    if (*it->def.index > *c.def.index) {
      at = it;
    } else {
      at = it + 1;
      break;
    }
  }
  list->insert(at, std::move(c));
}

void AddImplicit(std::vector<EffectiveController>* list, const std::string& type, unsigned index,
                 const std::string& model) {
  if (Exists(*list, type, index)) return;
  EffectiveController c;
  c.def.type = type;
  c.def.index = index;
  c.def.model = model;
  c.implicit = true;
  Insert(list, std::move(c));
}

unsigned DiskController(const domain::Disk& d) {
  return d.address.type == "drive" ? d.address.controller.value_or(0) : 0;
}

// libvirt's argv order of controller types.
int TypeOrder(const std::string& type) {
  static const char* kOrder[] = {"pci", "usb", "scsi", "ide", "sata", "virtio-serial"};
  for (int i = 0; i < 6; ++i)
    if (type == kOrder[i]) return i;
  return 6;
}

std::string Num(unsigned v) { return std::to_string(v); }

// The -device of one controller; nullopt for the built-in ones and usb model none.
std::optional<PlannedDevice> Render(const DeviceContext& ctx, const EffectiveController& e) {
  const Controller& c = e.def;
  const unsigned index = *c.index;
  PlannedDevice d;
  d.family = "controller";
  d.element = "controller";
  d.line = c.line;
  d.AtPci(PciRank::kController, c.address);
  auto prop = [&](const char* key, std::string value) { d.props.emplace_back(key, std::move(value)); };
  if (c.type == "usb") {
    if (c.model == "none") return std::nullopt;
    static const std::pair<const char*, const char*> kDrivers[] = {
        {"piix3-uhci", "piix3-usb-uhci"}, {"ich9-ehci1", "ich9-usb-ehci1"}, {"ich9-uhci1", "ich9-usb-uhci1"},
        {"ich9-uhci2", "ich9-usb-uhci2"}, {"ich9-uhci3", "ich9-usb-uhci3"}, {"qemu-xhci", "qemu-xhci"},
        {"nec-xhci", "nec-usb-xhci"}};
    for (auto [model, driver] : kDrivers)
      if (c.model == model) d.driver = driver;
    const std::string bus_id = index == 0 ? "usb" : "usb" + Num(index);
    if (c.master_startport) {
      // A companion: its ports belong to the EHCI controller's bus.
      prop("masterbus", bus_id + ".0");
      prop("firstport", Num(*c.master_startport));
    } else {
      d.id = bus_id;
    }
    if (c.ports && (c.model == "qemu-xhci" || c.model == "nec-xhci")) {
      prop("p2", Num(*c.ports));
      prop("p3", Num(*c.ports));
    }
  } else if (c.type == "scsi") {
    d.driver = c.model == "virtio-scsi" ? "virtio-scsi-pci" : "lsi";
    d.id = "scsi" + Num(index);
  } else if (c.type == "virtio-serial") {
    d.driver = "virtio-serial-pci";
    d.id = "virtio-serial" + Num(index);
    if (c.ports) prop("max_ports", Num(*c.ports));
    if (c.vectors) prop("vectors", Num(*c.vectors));
  } else if (c.type == "sata") {
    if (ctx.q35 && index == 0) {
      // The ICH9 AHCI at 00:1f.2 is part of q35; its buses are ide.0 .. ide.5.
      if (c.address.type == "pci" && (c.address.bus.value_or(0) || c.address.slot.value_or(0) != 0x1f ||
                                      c.address.function.value_or(0) != 2))
        Fail(*ctx.def, c.line, "the primary SATA controller of q35 must have PCI address 0000:00:1f.2");
      return std::nullopt;
    }
    d.driver = "ahci";
    d.id = "sata" + Num(index);
  } else if (c.type == "ide") {
    if (ctx.q35) Fail(*ctx.def, c.line, "IDE controllers are unsupported on q35 (use sata)");
    if (index != 0) Fail(*ctx.def, c.line, "only the built-in IDE controller (index 0) of the PIIX3 is supported");
    if (c.address.type == "pci" && (c.address.bus.value_or(0) || c.address.slot.value_or(0) != 1 ||
                                    c.address.function.value_or(0) != 1))
      Fail(*ctx.def, c.line, "the primary IDE controller must have PCI address 0000:00:01.1");
    return std::nullopt;  // the PIIX3's own, at 00:01.1
  } else if (c.type == "pci") {
    if (c.model == "pci-root" || c.model == "pcie-root") {
      if ((c.model == "pcie-root") != ctx.q35)
        Fail(*ctx.def, c.line, "a " + c.model + " controller does not fit machine '" + ctx.def->os.machine + "'");
      return std::nullopt;
    }
    if (c.model == "pcie-root-port" || c.model == "pcie-to-pci-bridge") {
      if (!ctx.q35) Fail(*ctx.def, c.line, "a " + c.model + " controller needs a q35 machine");
    }
    d.rank = PciRank::kPciController;
    d.id = "pci." + Num(index);
    if (c.model == "pcie-root-port") {
      d.driver = c.model_name.empty() ? "pcie-root-port" : c.model_name;
      if (c.port) prop("port", "0x" + [&] { char b[8]; std::snprintf(b, sizeof b, "%x", *c.port); return std::string(b); }());
      if (c.chassis) prop("chassis", Num(*c.chassis));
    } else if (c.model == "pci-bridge") {
      d.driver = "pci-bridge";
      if (c.chassis_nr) prop("chassis_nr", Num(*c.chassis_nr));
    } else {
      d.driver = "pcie-pci-bridge";
    }
    if (!c.model_name.empty() && c.model_name != d.driver)
      Fail(*ctx.def, c.line, "<model name='" + c.model_name + "'> does not fit a " + c.model + " controller");
  }
  return d;
}

}  // namespace

std::vector<EffectiveController> EffectiveControllers(const domain::DomainDef& def, bool q35) {
  std::vector<EffectiveController> list;
  for (const Controller& x : def.devices.controllers) {
    EffectiveController c{x, false};
    if (!c.def.index && c.def.type == "usb" && c.def.master_startport) {
      // A companion without an index belongs to the USB controller before it (libvirt).
      unsigned last = 0;
      for (const EffectiveController& e : list)
        if (e.def.type == "usb") last = *e.def.index;
      c.def.index = last;
    } else if (!c.def.index) {
      unsigned i = 0;
      while (Exists(list, c.def.type, i)) ++i;
      c.def.index = i;
    } else if (Exists(list, c.def.type, *c.def.index) &&
               !(c.def.type == "usb" && (c.def.master_startport || c.def.model.starts_with("ich9-")))) {
      Fail(def, x.line, "a second " + c.def.type + " controller with index " + std::to_string(*c.def.index));
    }
    if (c.def.type == "pci" && (*c.def.index == 0) != (c.def.model == "pci-root" || c.def.model == "pcie-root"))
      Fail(def, x.line, "The PCI controller with index='0' must be model='" + std::string(q35 ? "pcie-root" : "pci-root") +
                            "' for this machine type, but model='" + c.def.model + "' was found instead");
    if (c.def.type == "usb" && c.def.model.empty()) c.def.model = q35 ? "qemu-xhci" : "piix3-uhci";
    if (c.def.type == "scsi" && c.def.model.empty()) c.def.model = "lsilogic";  // libvirt's x86 default
    Insert(&list, std::move(c));
  }
  // qemuDomainDefAddDefaultDevices: a USB controller, the q35 SATA, the root bus.
  if (std::none_of(list.begin(), list.end(), [](const EffectiveController& c) { return c.def.type == "usb"; }))
    AddImplicit(&list, "usb", 0, q35 ? "qemu-xhci" : "piix3-uhci");
  if (q35) AddImplicit(&list, "sata", 0, "");
  AddImplicit(&list, "pci", 0, q35 ? "pcie-root" : "pci-root");
  // virDomainDefAddImplicitControllers: what the disks name, then virtio-serial.
  for (const char* bus : {"scsi", "sata", "ide"}) {
    int max = -1;
    for (const domain::Disk& d : def.devices.disks)
      if (d.target_bus == bus) max = std::max<int>(max, static_cast<int>(DiskController(d)));
    for (int i = 0; i <= max; ++i) AddImplicit(&list, bus, static_cast<unsigned>(i), bus == std::string("scsi") ? "lsilogic" : "");
  }
  bool virtio_serial = std::any_of(def.devices.chardevs.begin(), def.devices.chardevs.end(), [](const domain::CharDev& c) {
    return (c.kind == "console" || c.kind == "channel") && c.target_type == "virtio";
  });
  if (virtio_serial) AddImplicit(&list, "virtio-serial", 0, "");
  return list;
}

void PlanControllers(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const domain::DomainDef& def = *ctx.def;
  std::vector<EffectiveController> list = EffectiveControllers(def, ctx.q35);

  bool usb_enabled = std::any_of(list.begin(), list.end(),
                                 [](const EffectiveController& c) { return c.def.type == "usb" && c.def.model != "none"; });
  if (!usb_enabled) {
    for (const domain::Input& in : def.devices.inputs)
      if (in.bus == "usb") Fail(def, in.line, "USB is disabled for this domain, but USB devices are present in the domain XML");
    for (const domain::RedirDev& r : def.devices.redirdevs)
      if (r.bus == "usb") Fail(def, r.line, "USB is disabled for this domain, but USB devices are present in the domain XML");
  }

  std::vector<PlannedDevice> planned;
  std::vector<int> type_order;
  for (size_t i = 0; i < list.size(); ++i) {
    std::optional<PlannedDevice> d = Render(ctx, list[i]);
    if (!d) continue;
    d->pci_order = static_cast<int>(i);
    planned.push_back(std::move(*d));
    type_order.push_back(TypeOrder(list[i].def.type));
  }
  // argv: by type (pci, usb, scsi, ide, sata, virtio-serial), each in libvirt's list order.
  std::vector<size_t> order(planned.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return type_order[a] < type_order[b]; });
  for (size_t i : order) out->push_back(std::move(planned[i]));
}

}  // namespace qlaunch::qemu
