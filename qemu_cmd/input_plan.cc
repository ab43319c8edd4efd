// <input> and <redirdev>, and the USB ports they (and usb disks) get on the USB controllers
// as libvirt 9.0 assigns them. ps2 mouse and keyboard are built into the machine (libvirt adds
// them to every x86 domain and renders nothing for them).
#include <algorithm>
#include <set>

#include "qemu_cmd/graphics_plan.h"
#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

unsigned UsbControllerPorts(const std::string& model, std::optional<unsigned> ports) {
  if (model == "ehci" || model == "ich9-ehci1") return 6;
  if (model.starts_with("ich9-uhci")) return 0;  // companions: their ports are the EHCI's
  if (model == "pci-ohci") return 3;
  if (model == "nec-xhci" || model == "qemu-xhci") return ports.value_or(4);
  return 2;  // piix3-uhci, piix4-uhci, vt82c686b-uhci
}

namespace {

struct UsbBus {
  unsigned index = 0;
  unsigned ports = 0;
  std::set<std::string> taken;
};

std::string BusName(unsigned index) { return index == 0 ? "usb.0" : "usb" + std::to_string(index) + ".0"; }

// One usb device to place, in libvirt's order.
struct UsbDevice {
  std::map<size_t, UsbPort>* to;
  size_t index;
  const domain::DeviceAddress* address;
  int line;
  const char* element;
};

}  // namespace

UsbPorts AssignUsbPorts(const DeviceContext& ctx) {
  const domain::Devices& devs = ctx.def->devices;
  UsbPorts out;
  std::vector<UsbDevice> wanted;
  for (size_t i = 0; i < devs.disks.size(); ++i)
    if (devs.disks[i].target_bus == "usb")
      wanted.push_back({&out.disks, i, &devs.disks[i].address, devs.disks[i].line, "disk"});
  for (size_t i = 0; i < devs.inputs.size(); ++i)
    if (devs.inputs[i].bus == "usb")
      wanted.push_back({&out.inputs, i, &devs.inputs[i].address, devs.inputs[i].line, "input"});
  for (size_t i = 0; i < devs.redirdevs.size(); ++i)
    wanted.push_back({&out.redirdevs, i, &devs.redirdevs[i].address, devs.redirdevs[i].line, "redirdev"});
  if (wanted.empty()) return out;

  // The USB buses: one per controller index (companion controllers share their index).
  std::map<unsigned, UsbBus> buses;
  bool disabled = false, any = false;
  unsigned next_index = 0;
  for (const domain::Controller& c : devs.controllers) {
    if (c.type != "usb") continue;
    any = true;
    unsigned index = c.index.value_or(next_index);
    next_index = std::max(next_index, index + 1);
    if (c.model == "none") {
      disabled = true;
      continue;
    }
    std::string model = c.model.empty() ? (ctx.q35 ? "qemu-xhci" : "piix3-uhci") : c.model;
    UsbBus& bus = buses[index];
    bus.index = index;
    bus.ports += UsbControllerPorts(model, c.ports);
  }
  if (!any) buses[0] = UsbBus{0, UsbControllerPorts(ctx.q35 ? "qemu-xhci" : "piix3-uhci", std::nullopt), {}};
  if (disabled && buses.empty()) {
    const UsbDevice& d = wanted.front();
    throw DiagnosticError(PlanError(*ctx.def, d.line, d.element,
                                    std::string("Can't add USB ") + d.element + " device. USB bus is disabled"));
  }
  // Explicit addresses first (libvirt reserves them before assigning the rest).
  for (const UsbDevice& d : wanted) {
    if (d.address->type != "usb" || d.address->usb_port.empty()) continue;
    unsigned index = d.address->drive_bus.value_or(0);
    auto bus = buses.find(index);
    if (bus == buses.end())
      throw DiagnosticError(PlanError(*ctx.def, d.line, d.element,
                                      "there is no USB controller with index " + std::to_string(index)));
    if (!bus->second.taken.insert(d.address->usb_port).second)
      throw DiagnosticError(PlanError(*ctx.def, d.line, d.element,
                                      "USB port " + d.address->usb_port + " on bus " + std::to_string(index) +
                                          " is already taken"));
    (*d.to)[d.index] = UsbPort{BusName(index), d.address->usb_port};
  }
  for (const UsbDevice& d : wanted) {
    if (d.to->count(d.index)) continue;
    bool placed = false;
    for (auto& [index, bus] : buses) {
      if (d.address->type == "usb" && d.address->drive_bus && *d.address->drive_bus != index) continue;
      for (unsigned p = 1; p <= bus.ports && !placed; ++p) {
        std::string port = std::to_string(p);
        if (bus.taken.insert(port).second) {
          (*d.to)[d.index] = UsbPort{BusName(index), port};
          placed = true;
        }
      }
      if (placed) break;
    }
    if (!placed)
      throw DiagnosticError(PlanError(*ctx.def, d.line, d.element,
                                      "no free USB port left for this device (libvirt would add a usb-hub; "
                                      "qlaunch does not: add ports to the USB controller)"));
  }
  return out;
}

void PlanInputDevices(const DeviceContext& ctx, const UsbPorts& usb, std::vector<PlannedDevice>* out) {
  const auto& inputs = ctx.def->devices.inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const domain::Input& in = inputs[i];
    if (in.bus == "ps2") continue;  // the machine's i8042 mouse and keyboard
    PlannedDevice d;
    d.family = "graphics";
    d.element = "input";
    d.line = in.line;
    d.id = "input" + std::to_string(i);  // libvirt counts every input, ps2 ones too
    static const std::map<std::string, std::string> kUsb = {
        {"tablet", "usb-tablet"}, {"mouse", "usb-mouse"}, {"keyboard", "usb-kbd"}};
    static const std::map<std::string, std::string> kVirtio = {
        {"tablet", "virtio-tablet-pci"}, {"mouse", "virtio-mouse-pci"}, {"keyboard", "virtio-keyboard-pci"}};
    if (in.bus == "usb") {
      d.driver = kUsb.at(in.type);
      const UsbPort& port = usb.inputs.at(i);
      d.props = {{"bus", port.bus}, {"port", port.port}};
    } else {
      d.driver = kVirtio.at(in.type);
      d.AtPci(PciRank::kInput, in.address);
    }
    out->push_back(std::move(d));
  }
}

void PlanRedirDevices(const DeviceContext& ctx, const UsbPorts& usb, std::vector<PlannedDevice>* out) {
  const auto& redirs = ctx.def->devices.redirdevs;
  bool spice = false;
  for (const domain::Graphics& g : ctx.def->devices.graphics) spice |= g.type == "spice";
  for (size_t i = 0; i < redirs.size(); ++i) {
    if (!spice)
      throw DiagnosticError(PlanError(*ctx.def, redirs[i].line, "redirdev",
                                      "chardev 'spicevmc' not supported without spice graphics"));
    PlannedDevice d;
    d.family = "graphics";
    d.element = "redirdev";
    d.line = redirs[i].line;
    const std::string chardev = "charredir" + std::to_string(i);
    KeyValueBuilder chr("spicevmc");
    chr.Add("id", std::string_view(chardev)).Add("name", "usbredir");
    d.host_args.push_back({"-chardev", chr.str()});
    d.driver = "usb-redir";
    d.id = "redir" + std::to_string(i);
    const UsbPort& port = usb.redirdevs.at(i);
    d.props = {{"chardev", chardev}, {"bus", port.bus}, {"port", port.port}};
    out->push_back(std::move(d));
  }
}

}  // namespace qlaunch::qemu
