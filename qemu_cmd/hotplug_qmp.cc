#include "qemu_cmd/hotplug_qmp.h"

#include <stdexcept>

#include "qemu_cmd/pci_address.h"

namespace qlaunch::qemu {

using nlohmann::json;

namespace {

const std::string* Find(const std::vector<std::pair<std::string, std::string>>& kv, std::string_view key) {
  for (const auto& [k, v] : kv)
    if (k == key) return &v;
  return nullptr;
}

std::string Need(const std::vector<std::pair<std::string, std::string>>& kv, std::string_view key,
                 const DeviceArg& arg) {
  const std::string* v = Find(kv, key);
  if (!v) throw std::invalid_argument(arg.opt + " " + arg.value + ": no " + std::string(key) + "=");
  return *v;
}

bool OnOff(const std::string& v) { return v == "on" || v == "yes" || v == "true"; }

// -netdev user|tap,... as netdev_add's Netdev (typed: booleans are JSON booleans).
BackendCalls Netdev(const DeviceArg& arg, const std::string& fd_name) {
  const auto kv = SplitKeyValues(arg.value);
  json a = json::object();
  for (const auto& [k, v] : kv) {
    if (k.empty()) {
      a["type"] = v;
    } else if (k == "fd") {
      a["fd"] = fd_name;
    } else if (k == "vhost" || k == "ipv4" || k == "ipv6" || k == "restrict") {
      a[k] = OnOff(v);
    } else {
      a[k] = v;
    }
  }
  if (!a.contains("type") || !a.contains("id")) throw std::invalid_argument("-netdev " + arg.value + ": no type or id");
  return {{"netdev_add", a}, {"netdev_del", {{"id", a["id"]}}}};
}

// -chardev pty|null|file|socket,... as chardev-add's ChardevBackend.
BackendCalls Chardev(const DeviceArg& arg, const std::string& fd_name) {
  const auto kv = SplitKeyValues(arg.value);
  const std::string type = kv.empty() || !kv[0].first.empty() ? "" : kv[0].second;
  const std::string id = Need(kv, "id", arg);
  json backend;
  if (type == "pty" || type == "null") {
    backend = {{"type", type}, {"data", json::object()}};
  } else if (type == "file") {
    json data = {{"out", Need(kv, "path", arg)}};
    if (const std::string* append = Find(kv, "append")) data["append"] = OnOff(*append);
    backend = {{"type", "file"}, {"data", data}};
  } else if (type == "socket") {
    json addr;
    if (Find(kv, "fd")) {
      addr = {{"type", "fd"}, {"data", {{"str", fd_name}}}};
    } else if (const std::string* path = Find(kv, "path")) {
      addr = {{"type", "unix"}, {"data", {{"path", *path}}}};
    } else {
      addr = {{"type", "inet"}, {"data", {{"host", Need(kv, "host", arg)}, {"port", Need(kv, "port", arg)}}}};
    }
    json data = {{"addr", addr}};
    if (const std::string* server = Find(kv, "server")) data["server"] = OnOff(*server);
    if (const std::string* wait = Find(kv, "wait")) data["wait"] = OnOff(*wait);
    if (const std::string* telnet = Find(kv, "telnet")) data["telnet"] = OnOff(*telnet);
    backend = {{"type", "socket"}, {"data", data}};
  } else {
    throw std::invalid_argument("-chardev " + arg.value + ": a '" + type + "' character device cannot be added at run time");
  }
  return {{"chardev-add", {{"id", id}, {"backend", backend}}}, {"chardev-remove", {{"id", id}}}};
}

// -object as object-add: JSON where the plan has it (QEMU 6.0+), else key=value.
BackendCalls Object(const DeviceArg& arg) {
  json a;
  if (!arg.value.empty() && arg.value[0] == '{') {
    a = json::parse(arg.value);
  } else {
    for (const auto& [k, v] : SplitKeyValues(arg.value)) a[k.empty() ? "qom-type" : k] = v;
  }
  if (!a.contains("qom-type") || !a.contains("id")) throw std::invalid_argument("-object " + arg.value + ": no type or id");
  return {{"object-add", a}, {"object-del", {{"id", a["id"]}}}};
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SplitKeyValues(std::string_view option) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string part;
  auto flush = [&] {
    const size_t eq = part.find('=');
    if (eq == std::string::npos) {
      out.emplace_back("", part);
    } else {
      out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    }
    part.clear();
  };
  for (size_t i = 0; i < option.size(); ++i) {
    if (option[i] == ',') {
      if (i + 1 < option.size() && option[i + 1] == ',') {
        part += ',';
        ++i;
        continue;
      }
      flush();
      continue;
    }
    part += option[i];
  }
  if (!option.empty()) flush();
  return out;
}

BackendCalls BackendCallsOf(const DeviceArg& arg, const std::string& fd_name) {
  if (arg.opt == "-blockdev") {
    json a = json::parse(arg.value);
    return {{"blockdev-add", a}, {"blockdev-del", {{"node-name", a.at("node-name")}}}};
  }
  if (arg.opt == "-netdev") return Netdev(arg, fd_name);
  if (arg.opt == "-chardev") return Chardev(arg, fd_name);
  if (arg.opt == "-object") return Object(arg);
  throw std::invalid_argument(arg.opt + " cannot be added to a running QEMU");
}

QmpCall DeviceAddOf(const PlannedDevice& d) {
  json a = {{"driver", d.driver}};
  if (!d.id.empty()) a["id"] = d.id;
  for (const auto& [k, v] : d.props) a[k] = v;
  if (d.slot) {
    a["bus"] = d.slot->bus;
    std::string addr = "0x" + ToHex(d.slot->slot);
    if (d.slot->function) addr += ".0x" + ToHex(d.slot->function);
    a["addr"] = addr;
    if (d.slot->multifunction) a["multifunction"] = "on";
  }
  return {"device_add", a};
}

QmpCall DeviceDelOf(const std::string& id) { return {"device_del", {{"id", id}}}; }

}  // namespace qlaunch::qemu
