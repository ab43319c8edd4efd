#include "qemu_cmd/hotplug_plan.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

#include "qemu_cmd/chardev_plan.h"
#include "qemu_cmd/disk_plan.h"
#include "qemu_cmd/net_plan.h"
#include "qemu_cmd/pci_address.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

using domain::DeviceFragment;
using domain::DomainDef;

constexpr int kPlaceholderFd = 1000000;  // the planners' fd= for a tap or socket; passed by name instead

[[noreturn]] void Fail(const DomainDef& def, int line, const std::string& element, const std::string& message) {
  throw DiagnosticError(PlanError(def, line, element, message));
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Replaces whole tokens (not preceded or followed by a letter or digit), all at once: "net0" in
// "net0" and "id=net0," but not in "hostnet0" or "net01".
std::string Rename(const std::string& s, const std::map<std::string, std::string>& names) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool done = false;
    if (i == 0 || !IsWordChar(s[i - 1])) {
      for (const auto& [from, to] : names) {
        if (s.compare(i, from.size(), from) != 0) continue;
        const size_t end = i + from.size();
        if (end < s.size() && IsWordChar(s[end])) continue;
        out += to;
        i = end;
        done = true;
        break;
      }
    }
    if (!done) out += s[i++];
  }
  return out;
}

void Rename(PlannedDevice* d, const std::map<std::string, std::string>& names) {
  d->id = Rename(d->id, names);
  for (auto& [k, v] : d->props) v = Rename(v, names);
  for (DeviceArg& a : d->host_args) a.value = Rename(a.value, names);
}


const std::string* Prop(const DeviceRecord& d, const std::string& key) {
  for (const auto& [k, v] : d.props)
    if (k == key) return &v;
  return nullptr;
}

bool HasId(const std::vector<DeviceRecord>& devices, const std::string& id) {
  return std::any_of(devices.begin(), devices.end(), [&](const DeviceRecord& d) { return d.id == id; });
}

// The planned device of the fragment's element: the last one of its element (the element was
// appended last to its family's list).
PlannedDevice TakeLast(std::vector<PlannedDevice>& planned, const std::string& element, const DomainDef& def, int line) {
  for (auto it = planned.rbegin(); it != planned.rend(); ++it)
    if (it->element == element && it->line == line) return std::move(*it);
  Fail(def, line, element, "the device could not be planned");
}

void CheckController(const RunningDomain& running, const DomainDef& def, int line, const std::string& element,
                     const std::string& id, const std::string& what) {
  if (!HasId(running.devices, id))
    Fail(def, line, element, "the running domain has no " + what + " controller '" + id +
                                 "' for this device (qlaunch does not add controllers to a running domain)");
}

// The USB devices keep the ports they run on: each gets its recorded port as an explicit
// address, so the USB assignment gives a new device the first port still free, as libvirt's
// hot-plug does (the start's order would give it the first port of all).
void PinUsbPorts(const RunningDomain& running, DomainDef* def) {
  auto pin = [&](const DeviceRecord& r, domain::DeviceAddress* a) {
    const std::string* bus = Prop(r, "bus");
    const std::string* port = Prop(r, "port");
    if (!bus || !port || bus->rfind("usb", 0) != 0) return;
    a->type = "usb";
    a->usb_port = *port;
    const std::string digits = bus->substr(3, bus->find('.') - 3);
    a->drive_bus = digits.empty() ? 0u : static_cast<unsigned>(std::stoul(digits));
  };
  for (const DeviceRecord& r : running.devices) {
    for (domain::Disk& d : def->devices.disks)
      if (r.element == "disk" && d.line == r.line) pin(r, &d.address);
    for (domain::Input& in : def->devices.inputs)
      if (r.element == "input" && in.line == r.line) pin(r, &in.address);
    for (domain::RedirDev& rd : def->devices.redirdevs)
      if (r.element == "redirdev" && rd.line == r.line) pin(r, &rd.address);
  }
}

}  // namespace

// libvirt's next alias index (qemuDomainDeviceAliasIndex over the running devices): one past the
// highest PREFIX<N> in use, 0 when there is none.
unsigned NextAliasIndex(const std::vector<DeviceRecord>& devices, const std::string& prefix) {
  unsigned next = 0;
  for (const DeviceRecord& d : devices) {
    if (d.id.size() <= prefix.size() || d.id.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = d.id.substr(prefix.size());
    if (digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    next = std::max(next, static_cast<unsigned>(std::stoul(digits)) + 1);
  }
  return next;
}

std::vector<PlannedDevice> RunningPlannedDevices(const RunningDomain& running) {
  std::vector<PlannedDevice> out;
  for (const DeviceRecord& r : running.devices) {
    PlannedDevice d;
    d.element = r.element;
    d.family = r.family;
    d.driver = r.driver;
    d.id = r.id;
    d.props = r.props;
    d.slot = r.slot;
    d.pci = r.slot.has_value();
    out.push_back(std::move(d));
  }
  return out;
}

AttachPlan PlanAttach(const RunningDomain& running, const DeviceFragment& fragment, const QemuCaps& caps) {
  // The running definition with the new element appended to its family's list: the family
  // planners see the domain as it will be. Errors name the device file (only the new element
  // can fail: the others were planned when the domain started).
  DomainDef def = *running.def;
  def.file = fragment.file;
  const domain::Devices& f = fragment.devices;
  const int line = fragment.line;
  const std::string& element = fragment.element;
  PlanOptions opts;
  opts.devices.channel_dir = running.channel_dir;
  const DeviceContext ctx{&def, &caps, &opts, IsQ35(def.os.machine)};
  std::vector<PlannedDevice> planned;
  std::map<std::string, std::string> names;
  AttachPlan plan;
  plan.element = element;
  plan.node_index = running.node_index;

  if (!f.disks.empty()) {
    const domain::Disk& disk = f.disks[0];
    for (const domain::Disk& d : running.def->devices.disks)
      if (d.target_dev == disk.target_dev)
        Fail(def, line, element, "target '" + disk.target_dev + "' is already used by a disk of the running domain" +
                                     (d.source.empty() ? std::string() : " (" + d.source + ")"));
    if (std::optional<DriveAddress> a = DiskDriveAddress(disk); a && disk.target_bus == "scsi")
      CheckController(running, def, line, element, "scsi" + std::to_string(a->controller), "scsi");
    if (disk.target_bus == "usb") PinUsbPorts(running, &def);
    def.devices.disks.push_back(disk);  // last: planned last, node name libvirt-1 (renamed below)
    PlanDiskDevices(ctx, &planned);
    names["libvirt-1"] = "libvirt-" + std::to_string(++plan.node_index);
    if (!disk.source.empty()) plan.files.push_back(disk.source);
  } else if (!f.interfaces.empty()) {
    domain::Interface nic = f.interfaces[0];
    std::vector<std::string> macs;
    for (const DeviceRecord& r : running.devices)
      if (r.element == "interface")
        if (const std::string* mac = Prop(r, "mac")) macs.push_back(*mac);
    if (!nic.mac.empty() && std::find(macs.begin(), macs.end(), nic.mac) != macs.end())
      Fail(def, nic.mac_line ? nic.mac_line : line, "mac",
           "MAC address " + nic.mac + " is already used by an interface of the running domain");
    const size_t i = def.devices.interfaces.size();
    if (nic.mac.empty()) nic.mac = DerivedMac(def, i, macs);
    def.devices.interfaces.push_back(nic);
    if (nic.type != "user") {
      opts.devices.net_fds.assign(i + 1, -1);
      opts.devices.net_fds[i] = kPlaceholderFd;
      plan.host_fd = AttachPlan::HostFd::kTap;
      plan.nic = &f.interfaces[0];
    }
    PlanNetDevices(ctx, &planned);
    const unsigned k = NextAliasIndex(running.devices, "net");
    names["net" + std::to_string(i)] = "net" + std::to_string(k);
    names["hostnet" + std::to_string(i)] = "hostnet" + std::to_string(k);
    plan.fd_name = "hostnet" + std::to_string(k) + "-fd";
  } else if (!f.rngs.empty()) {
    const size_t i = def.devices.rngs.size();
    def.devices.rngs.push_back(f.rngs[0]);
    std::vector<PlannedDevice> misc;
    PlanMiscDevices(ctx, &misc);
    planned = std::move(misc);
    const unsigned k = NextAliasIndex(running.devices, "rng");
    for (const char* prefix : {"rng", "objrng", "charrng"})
      names[prefix + std::to_string(i)] = prefix + std::to_string(k);
  } else if (f.chardevs.size() == 1 && f.chardevs[0].kind == "channel") {
    const domain::CharDev& c = f.chardevs[0];
    for (const domain::CharDev& other : running.def->devices.chardevs)
      if (other.kind == "channel" && !c.target_name.empty() && other.target_name == c.target_name)
        Fail(def, line, element, "the running domain already has a channel named '" + c.target_name + "'");
    size_t n = 0;
    for (const domain::CharDev& other : def.devices.chardevs) n += other.kind == "channel";
    const size_t index = def.devices.chardevs.size();
    def.devices.chardevs.push_back(c);
    if (c.type == "unix" && c.mode == "bind") {
      for (const ChardevListenSocket& s : ChardevListenSockets(def, running.channel_dir))
        if (s.index == index) plan.socket_path = s.path;
      opts.devices.chardev_fds[index] = kPlaceholderFd;
      plan.host_fd = AttachPlan::HostFd::kListenSocket;
    }
    if (!HasId(running.devices, "virtio-serial0"))
      CheckController(running, def, line, element, "virtio-serial0", "virtio-serial");
    PlanCharDevices(ctx, &planned);
    const unsigned k = NextAliasIndex(running.devices, "channel");
    names["channel" + std::to_string(n)] = "channel" + std::to_string(k);
    names["charchannel" + std::to_string(n)] = "charchannel" + std::to_string(k);
    plan.fd_name = "charchannel" + std::to_string(k) + "-fd";
  } else if (!f.controllers.empty()) {
    // libvirt 9.0 hot-plugs SCSI controllers only (a disk on a bus the domain lacks needs one).
    const domain::Controller& c = f.controllers[0];
    if (c.type != "scsi")
      Fail(def, line, element, "'" + c.type + "' controller cannot be hot plugged (only 'scsi' controllers can)");
    for (const domain::Controller& other : running.def->devices.controllers)
      if (other.type == "scsi" && c.index && other.index == c.index)
        Fail(def, line, element, "the running domain already has a scsi controller with index " + std::to_string(*c.index));
    def.devices.controllers.push_back(c);
    PlanControllers(ctx, &planned);
  } else {
    Fail(def, line, element,
         "qlaunch cannot attach a <" + element +
             "> to a running domain (it attaches <disk>, <interface>, <rng>, <channel> and scsi <controller>)");
  }

  PlannedDevice d = TakeLast(planned, element, def, line);
  Rename(&d, names);
  if (d.pci && !d.slot) AssignHotplugPciAddress(ctx, RunningPlannedDevices(running), &d);
  if (HasId(running.devices, d.id))
    Fail(def, line, element, "the running domain already has a device with the alias '" + d.id + "'");

  for (const DeviceArg& a : d.host_args) {
    BackendCalls calls;
    try {
      calls = BackendCallsOf(a, plan.fd_name);
    } catch (const std::exception& e) {
      Fail(def, line, element, e.what());
    }
    if (a.value.find("fd=" + std::to_string(kPlaceholderFd)) != std::string::npos) {
      // The fd goes first, under its name; a failure later closes it again.
      plan.steps.push_back({{"getfd", {{"fdname", plan.fd_name}}, true}, {"closefd", {{"fdname", plan.fd_name}}}});
    }
    plan.steps.push_back({calls.add, calls.remove});
  }
  if (!d.driver.empty()) plan.steps.push_back({DeviceAddOf(d), {}});
  plan.record = DeviceRecord{d.element, d.line, d.family, d.driver, d.id, d.props, d.slot};
  return plan;
}

DetachPlan PlanDetach(const RunningDomain& running, const DeviceFragment& fragment) {
  const DomainDef& def = *running.def;
  DomainDef fdef;
  fdef.file = fragment.file;
  const domain::Devices& f = fragment.devices;
  const std::string& element = fragment.element;
  std::vector<int> lines;  // the running elements that match
  if (!f.disks.empty()) {
    for (const domain::Disk& d : def.devices.disks)
      if (d.target_dev == f.disks[0].target_dev) lines.push_back(d.line);
    if (lines.empty()) Fail(fdef, fragment.line, element, "the running domain has no disk with target '" + f.disks[0].target_dev + "'");
  } else if (!f.interfaces.empty()) {
    const std::string& mac = f.interfaces[0].mac;
    for (const DeviceRecord& r : running.devices) {
      if (r.element != "interface") continue;
      const std::string* m = Prop(r, "mac");
      if (mac.empty() || (m && *m == mac)) lines.push_back(r.line);
    }
    if (lines.empty())
      Fail(fdef, fragment.line, element,
           mac.empty() ? "the running domain has no interface" : "the running domain has no interface with MAC " + mac);
    if (lines.size() > 1)
      Fail(fdef, fragment.line, element, "several interfaces of the running domain match; give the <mac address> of the one to detach");
  } else if (!f.rngs.empty()) {
    for (const domain::Rng& r : def.devices.rngs)
      if (r.backend_model == f.rngs[0].backend_model && r.source == f.rngs[0].source && r.egd_path == f.rngs[0].egd_path)
        lines.push_back(r.line);
    if (lines.empty()) Fail(fdef, fragment.line, element, "the running domain has no rng with this backend");
  } else if (f.chardevs.size() == 1 && f.chardevs[0].kind == "channel") {
    for (const domain::CharDev& c : def.devices.chardevs)
      if (c.kind == "channel" && c.target_name == f.chardevs[0].target_name) lines.push_back(c.line);
    if (lines.empty())
      Fail(fdef, fragment.line, element, "the running domain has no channel named '" + f.chardevs[0].target_name + "'");
  } else if (!f.controllers.empty() && f.controllers[0].type == "scsi") {
    const unsigned index = f.controllers[0].index.value_or(0);
    const std::string id = "scsi" + std::to_string(index);
    for (const DeviceRecord& r : running.devices) {
      const std::string* bus = Prop(r, "bus");
      if (bus && bus->rfind(id + ".", 0) == 0)
        Fail(fdef, fragment.line, element, "device cannot be detached: the scsi controller " + id + " is in use by " + r.id);
    }
    for (const DeviceRecord& r : running.devices)
      if (r.element == "controller" && r.id == id) lines.push_back(r.line);
    if (lines.empty()) Fail(fdef, fragment.line, element, "the running domain has no scsi controller with index " + std::to_string(index));
  } else {
    Fail(fdef, fragment.line, element, "qlaunch cannot detach a <" + element + "> from a running domain");
  }
  DetachPlan plan;
  plan.element = element;
  plan.running_line = lines.front();
  bool found = false;
  for (size_t i = 0; i < running.devices.size(); ++i) {
    const DeviceRecord& r = running.devices[i];
    if (r.element != element || r.line != plan.running_line) continue;
    plan.record = i;
    plan.id = r.id;
    found = true;
    break;
  }
  if (!found) Fail(fdef, fragment.line, element, "the running domain's record of this device is missing");
  const DeviceRecord& r = running.devices[plan.record];
  if (const std::string* drive = Prop(r, "drive")) {
    plan.release.push_back({"blockdev-del", {{"node-name", *drive}}});
    if (drive->size() > 7 && drive->ends_with("-format"))
      plan.release.push_back({"blockdev-del", {{"node-name", drive->substr(0, drive->size() - 7) + "-storage"}}});
  }
  if (const std::string* netdev = Prop(r, "netdev")) plan.release.push_back({"netdev_del", {{"id", *netdev}}});
  if (const std::string* chardev = Prop(r, "chardev")) plan.release.push_back({"chardev-remove", {{"id", *chardev}}});
  if (const std::string* rng = Prop(r, "rng")) {
    plan.release.push_back({"object-del", {{"id", *rng}}});
    for (const domain::Rng& x : def.devices.rngs)
      if (x.line == plan.running_line && x.backend_model == "egd")
        plan.release.push_back({"chardev-remove", {{"id", "char" + rng->substr(3)}}});
  }
  return plan;
}

}  // namespace qlaunch::qemu
