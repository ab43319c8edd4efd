#include "qemu_cmd/chardev_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

using domain::CharDev;

// Where a virtio chardev sits: "virtio-serial<controller>.<bus>" and its port number.
struct VirtioPort {
  unsigned controller = 0, bus = 0, port = 0;
};

// libvirt's assignment of virtio-serial ports to channels: the XML's addresses first, then
// every channel without one gets the lowest free port from 1 on virtio-serial0.0 (port 0 is
// for a virtio console). Virtio consoles keep only an address the XML gives (QEMU puts them
// on port 0 of the first bus otherwise).
std::map<size_t, VirtioPort> AssignVirtioPorts(const domain::DomainDef& def) {
  const auto& chrs = def.devices.chardevs;
  std::map<size_t, VirtioPort> out;
  std::set<std::tuple<unsigned, unsigned, unsigned>> used;
  for (size_t i = 0; i < chrs.size(); ++i) {
    const CharDev& c = chrs[i];
    const bool virtio = c.kind == "channel" || (c.kind == "console" && c.target_type == "virtio");
    if (!virtio || c.address.type != "virtio-serial") continue;
    VirtioPort p{c.address.controller.value_or(0), c.address.drive_bus.value_or(0), 0};
    if (c.address.port) {
      p.port = *c.address.port;
      if (!used.insert({p.controller, p.bus, p.port}).second)
        throw DiagnosticError(PlanError(def, c.line, c.kind,
                                        "virtio-serial port " + std::to_string(p.port) + " is used twice"));
    }
    out[i] = p;
  }
  for (size_t i = 0; i < chrs.size(); ++i) {
    const CharDev& c = chrs[i];
    if (c.kind != "channel") continue;
    auto it = out.find(i);
    if (it != out.end() && it->second.port != 0) continue;
    VirtioPort p = it != out.end() ? it->second : VirtioPort{};
    for (p.port = 1; used.count({p.controller, p.bus, p.port}); ++p.port) {
    }
    used.insert({p.controller, p.bus, p.port});
    out[i] = p;
  }
  return out;
}

// libvirt's serial port numbers: a serial without <target port> gets one more than the
// highest port of all serials so far or given (document order).
std::map<size_t, unsigned> AssignSerialPorts(const domain::DomainDef& def) {
  const auto& chrs = def.devices.chardevs;
  std::map<size_t, unsigned> out;
  std::set<unsigned> given;
  std::optional<unsigned> max;
  for (const CharDev& c : chrs)
    if (c.kind == "serial" && c.target_port) {
      if (!given.insert(*c.target_port).second)
        throw DiagnosticError(PlanError(def, c.line, "serial", "serial port " + std::to_string(*c.target_port) +
                                                                   " is used twice"));
      max = std::max(max.value_or(0), *c.target_port);
    }
  for (size_t i = 0; i < chrs.size(); ++i) {
    if (chrs[i].kind != "serial") continue;
    if (chrs[i].target_port) {
      out[i] = *chrs[i].target_port;
    } else {
      out[i] = max ? *max + 1 : 0;
      max = out[i];
    }
  }
  return out;
}

std::string VioserName(const VirtioPort& p) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "vioser-%02x-%02x-%02x.sock", p.controller, p.bus, p.port);
  return buf;
}

// The -chardev value of `c` with QEMU id `id`.
std::string ChardevValue(const DeviceContext& ctx, const CharDev& c, size_t index, const std::string& id,
                         const std::map<size_t, std::string>& listen_paths) {
  const DeviceResources& res = ctx.opts->devices;
  if (c.type == "pty" || c.type == "null" || c.type == "stdio") {
    KeyValueBuilder kv(c.type);
    kv.Add("id", std::string_view(id));
    return kv.str();
  }
  if (c.type == "file") {
    KeyValueBuilder kv("file");
    kv.Add("id", std::string_view(id));
    kv.Add("path", std::string_view(c.path));
    if (c.append) kv.AddBool("append", true);
    return kv.str();
  }
  if (c.type == "spicevmc") {
    const auto& g = ctx.def->devices.graphics;
    if (std::none_of(g.begin(), g.end(), [](const domain::Graphics& x) { return x.type == "spice"; }))
      throw DiagnosticError(PlanError(*ctx.def, c.line, c.kind, "chardev 'spicevmc' not supported without spice graphics"));
    KeyValueBuilder kv("spicevmc");
    kv.Add("id", std::string_view(id));
    kv.Add("name", "vdagent");
    return kv.str();
  }
  KeyValueBuilder kv("socket");
  kv.Add("id", std::string_view(id));
  if (c.type == "unix") {
    auto fd = res.chardev_fds.find(index);
    if (fd != res.chardev_fds.end() && fd->second >= 0) {
      kv.Add("fd", fd->second);  // the launcher's listening socket (launcher/host/chardev_host.cc)
    } else {
      auto p = listen_paths.find(index);
      kv.Add("path", std::string_view(p != listen_paths.end() ? p->second : c.path));
    }
  } else if (c.type == "tcp") {
    kv.Add("host", std::string_view(c.host));
    kv.Add("port", std::string_view(c.service));
    if (c.protocol == "telnet") kv.AddBool("telnet", true);
  } else {
    throw DiagnosticError(PlanError(*ctx.def, c.line, c.kind, "character device type '" + c.type + "' is not supported"));
  }
  if (c.mode == "bind") {
    kv.AddBool("server", true);
    kv.AddBool("wait", false);
  }
  return kv.str();
}

PlannedDevice Chardev(const DeviceContext& ctx, const CharDev& c, size_t index, const std::string& id,
                      const std::map<size_t, std::string>& listen_paths) {
  PlannedDevice d;
  d.family = "chardev";
  d.element = c.kind;
  d.line = c.line;
  d.host_args.push_back({"-chardev", ChardevValue(ctx, c, index, id, listen_paths)});
  return d;
}

void AddVirtioBus(const std::map<size_t, VirtioPort>& ports, size_t index, PlannedDevice* d) {
  auto it = ports.find(index);
  if (it == ports.end()) return;
  d->props.push_back({"bus", "virtio-serial" + std::to_string(it->second.controller) + "." +
                                 std::to_string(it->second.bus)});
  d->props.push_back({"nr", std::to_string(it->second.port)});
}

}  // namespace

std::string ChannelDir(const PlanOptions& opts) {
  if (!opts.devices.channel_dir.empty()) return opts.devices.channel_dir;
  const size_t slash = opts.qmp_socket.rfind('/');
  return (slash == std::string::npos ? std::string(".") : opts.qmp_socket.substr(0, slash)) + "/channel";
}

std::vector<ChardevListenSocket> ChardevListenSockets(const domain::DomainDef& def, const std::string& channel_dir) {
  std::vector<ChardevListenSocket> out;
  std::map<size_t, VirtioPort> ports;
  bool ports_done = false;
  std::set<std::string> names;
  const auto& chrs = def.devices.chardevs;
  for (size_t i = 0; i < chrs.size(); ++i) {
    const CharDev& c = chrs[i];
    if (c.type != "unix" || c.mode != "bind") continue;
    ChardevListenSocket s;
    s.index = i;
    if (!c.path.empty()) {
      s.path = c.path;
    } else {
      if (!ports_done) ports = AssignVirtioPorts(def), ports_done = true;
      std::string name = c.target_name.empty() ? VioserName(ports[i]) : c.target_name;
      if (name == "." || name == ".." || name.find('/') != std::string::npos)
        throw DiagnosticError(PlanError(def, c.line, c.kind, "channel name '" + name +
                                            "' cannot name its socket (give the channel a <source path>)"));
      if (!names.insert(name).second)
        throw DiagnosticError(PlanError(def, c.line, c.kind, "two channels named '" + name + "' without a path"));
      s.path = channel_dir + "/" + name;
      s.in_channel_dir = true;
    }
    out.push_back(std::move(s));
  }
  return out;
}

void PlanCharDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const domain::DomainDef& def = *ctx.def;
  const auto& chrs = def.devices.chardevs;
  std::map<size_t, std::string> listen_paths;
  for (const ChardevListenSocket& s : ChardevListenSockets(def, ChannelDir(*ctx.opts))) listen_paths[s.index] = s.path;
  const std::map<size_t, VirtioPort> ports = AssignVirtioPorts(def);
  std::map<size_t, unsigned> serial_ports = AssignSerialPorts(def);

  // The serials; a lone <console> with target serial stands for serial0.
  std::vector<size_t> serials;
  for (size_t i = 0; i < chrs.size(); ++i)
    if (chrs[i].kind == "serial") serials.push_back(i);
  for (size_t i = 0, n = 0; i < chrs.size(); ++i) {
    if (chrs[i].kind != "console") continue;
    if (chrs[i].target_type == "serial") {
      if (n != 0)
        throw DiagnosticError(PlanError(def, chrs[i].line, "console",
                                        "only the first <console> can have target type 'serial'"));
      if (serials.empty()) {
        serials.push_back(i);
        serial_ports[i] = chrs[i].target_port.value_or(0);
      }
    }
    ++n;
  }
  for (size_t n = 0; n < serials.size(); ++n) {
    const size_t i = serials[n];
    const CharDev& c = chrs[i];
    const std::string id = "serial" + std::to_string(n);
    PlannedDevice d = Chardev(ctx, c, i, "char" + id, listen_paths);
    d.id = id;
    d.props.push_back({"chardev", "char" + id});
    if (c.target_type == "pci-serial") {
      d.driver = "pci-serial";
      d.AtPci(PciRank::kOther, c.address);
    } else {
      d.driver = "isa-serial";
      d.props.push_back({"index", std::to_string(serial_ports[i])});
    }
    out->push_back(std::move(d));
  }
  for (size_t i = 0, n = 0; i < chrs.size(); ++i) {
    const CharDev& c = chrs[i];
    if (c.kind != "channel") continue;
    const std::string id = "channel" + std::to_string(n++);
    PlannedDevice d = Chardev(ctx, c, i, "char" + id, listen_paths);
    d.driver = "virtserialport";
    d.id = id;
    AddVirtioBus(ports, i, &d);
    d.props.push_back({"chardev", "char" + id});
    if (!c.target_name.empty()) d.props.push_back({"name", c.target_name});
    out->push_back(std::move(d));
  }
  // libvirt inserts a stub console 0 for an ISA serial port 0 when the first <console> is not
  // that port: the XML's consoles are then console1, console2, ...
  size_t first_console = 0;
  {
    auto serial = std::find_if(chrs.begin(), chrs.end(), [](const CharDev& c) { return c.kind == "serial"; });
    auto console = std::find_if(chrs.begin(), chrs.end(), [](const CharDev& c) { return c.kind == "console"; });
    if (serial != chrs.end() && serial->target_type == "isa-serial" &&
        (console == chrs.end() || console->target_type != "serial"))
      first_console = 1;
  }
  for (size_t i = 0, n = first_console; i < chrs.size(); ++i) {
    const CharDev& c = chrs[i];
    if (c.kind != "console") continue;
    const std::string id = "console" + std::to_string(n++);
    if (c.target_type != "virtio") continue;  // serial0 (above, or the <serial> itself)
    PlannedDevice d = Chardev(ctx, c, i, "char" + id, listen_paths);
    d.driver = "virtconsole";
    d.id = id;
    AddVirtioBus(ports, i, &d);
    d.props.push_back({"chardev", "char" + id});
    out->push_back(std::move(d));
  }
}

}  // namespace qlaunch::qemu
