// Over 400 lines for a reason: one comparison (the live XML against QEMU's own answers), a method per device family over the same QMP replies.
#include "support/live_xml_vs_qemu.h"

#include <libxml/tree.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

#include "support/xpath_doc.h"

namespace qlaunch::testing {

namespace {

using nlohmann::json;

// A number as libvirt writes it ("3", "0x10"); -1 for anything else (absent, garbage).
long long Num(const std::string& s) {
  char* end = nullptr;
  const long long v = s.empty() ? -1 : std::strtoll(s.c_str(), &end, 0);
  return s.empty() || *end ? -1 : v;
}

// <memory>, <size>, <cell memory>: in bytes, libvirt's units (KiB when none).
long long Bytes(const std::string& value, const std::string& unit) {
  static const std::map<std::string, int> kShift = {{"b", 0},  {"bytes", 0}, {"k", 10}, {"KiB", 10}, {"M", 20},
                                                    {"MiB", 20}, {"G", 30},   {"GiB", 30}, {"T", 40}, {"TiB", 40}};
  const auto it = kShift.find(unit.empty() ? "KiB" : unit);
  const long long n = Num(value);
  return it == kShift.end() || n < 0 ? -1 : n << it->second;
}

std::string Hex(long long v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%02llx", v);
  return b;
}

// A QMP command's "return", or {"error": ...}.
json Ask(const Monitor& ask, const std::string& command, const json& arguments = nullptr) {
  json q = {{"execute", command}};
  if (!arguments.is_null()) q["arguments"] = arguments;
  const std::string out = ask(q.dump(), false);
  const json reply = json::parse(out, nullptr, false);
  if (!reply.is_discarded() && reply.contains("return")) return reply["return"];
  return {{"error", q.dump() + " answered " + out}};
}

json QomGet(const Monitor& ask, const std::string& id, const std::string& property) {
  return Ask(ask, "qom-get", {{"path", "/machine/peripheral/" + id}, {"property", property}});
}

// "0-2,4" -> "0 1 2 4".
std::string CpuList(const std::string& cpus) {
  std::string out;
  std::stringstream in(cpus);
  for (std::string part; std::getline(in, part, ',');) {
    const size_t dash = part.find('-');
    const long long from = Num(part.substr(0, dash)), to = dash == std::string::npos ? from : Num(part.substr(dash + 1));
    for (long long c = from; c >= 0 && c <= to; ++c) out += (out.empty() ? "" : " ") + std::to_string(c);
  }
  return out;
}

// " 0  1 " -> "0 1".
std::string Words(const std::string& s) {
  std::stringstream in(s);
  std::string out;
  for (std::string w; in >> w;) out += (out.empty() ? "" : " ") + w;
  return out;
}

// One PCI function as QEMU has it: behind which bridge (its qdev id; "" = the root bus).
struct PciFn {
  std::string id, parent, what;
  long long slot = 0, function = 0;
  bool listed = false;  // an element of the live XML names it
};

std::string Where(const std::string& parent, long long slot, long long function) {
  return "slot " + Hex(slot) + " function " + std::to_string(function) + " " +
         (parent.empty() ? "on the root bus" : "behind " + parent);
}

class Comparison {
 public:
  Comparison(const XPathDoc& x, const Monitor& ask, LiveXmlVsQemu* r) : x_(x), ask_(ask), r_(r) {
    const json list = Ask(ask_, "qom-list", {{"path", "/machine/peripheral"}});
    if (!list.is_array()) Wrong(list.dump());
    for (const json& p : list.is_array() ? list : json::array())
      if (const std::string t = p.value("type", ""); t.rfind("child<", 0) == 0)
        types_[p.value("name", "")] = t.substr(6, t.size() - 7);
  }

  void Pci();
  void Controllers();
  void VirtioSerial();
  void Disks();
  void Interfaces();
  void Chardevs();
  void Graphics();
  void Memory();
  void Vcpus();

 private:
  void Wrong(const std::string& what) { r_->mismatch.push_back(what); }
  void Checked(const std::string& what) { r_->checked.push_back(what); }
  std::string Label(xmlNodePtr n) const {
    const std::string alias = x_.Str("alias/@name", n);
    return "<" + std::string(reinterpret_cast<const char*>(n->name)) + "> " + (alias.empty() ? "(no alias)" : alias);
  }
  std::vector<PciFn> QemuPci();
  const XPathDoc& x_;
  const Monitor& ask_;
  LiveXmlVsQemu* r_;
  std::map<std::string, std::string> types_;  // QEMU's devices with an id -> their type
};

// Every PCI function QEMU has. The buses behind bridges get their numbers from the guest's
// firmware, and until it ran query-pci does not even list what is behind them: so QEMU's device
// tree says where each device with an id is (its parent_bus, a PCI bus; the bridge owning that
// bus; its addr, the devfn), and query-pci only what sits on the root bus (bus 0 from the start)
// without an id (q35's SATA controller, the host bridge, ...).
std::vector<PciFn> Comparison::QemuPci() {
  std::vector<PciFn> out;
  std::string root;  // the root bus's QOM path
  const json reply = Ask(ask_, "query-pci");
  if (!reply.is_array()) Wrong(reply.dump());
  for (const json& bus : reply.is_array() ? reply : json::array())
    for (const json& d : bus.value("devices", json::array())) {
      const std::string id = d.value("qdev_id", "");
      if (!id.empty() && root.empty())
        if (const json b = QomGet(ask_, id, "parent_bus"); b.is_string()) root = b;
      const json info = d.value("class_info", json::object());
      if (id.empty())
        out.push_back({"", "", info.value("desc", "class " + Hex(info.value("class", 0LL))), d.value("slot", 0LL),
                       d.value("function", 0LL)});
    }
  std::map<std::string, std::string> bus_types;
  for (const auto& [id, type] : types_) {
    const json devfn = QomGet(ask_, id, "addr"), bus = QomGet(ask_, id, "parent_bus");
    if (!devfn.is_number() || !bus.is_string() || bus.get<std::string>().empty()) continue;  // not on a bus with an addr
    const std::string path = bus;
    if (!bus_types.count(path)) {
      const json t = Ask(ask_, "qom-get", {{"path", path}, {"property", "type"}});
      bus_types[path] = t.is_string() ? t.get<std::string>() : t.dump();
    }
    if (bus_types[path] != "PCI" && bus_types[path] != "PCIE") continue;
    const std::string owner = path.substr(0, path.rfind('/')), peripheral = "/machine/peripheral/";
    const std::string parent = path == root ? ""
                               : owner.rfind(peripheral, 0) == 0 ? owner.substr(peripheral.size())
                                                                 : "the bus " + path;
    out.push_back({id, parent, type, devfn.get<long long>() >> 3, devfn.get<long long>() & 7});
  }
  return out;
}

// Every <address type='pci'>: bus N is the controller of index N, which is the root (pcie-root,
// pci-root) or the bridge of that alias QEMU has the device behind; slot, function and
// multifunction as QEMU has them. And every PCI device QEMU has with an id (and the machine's
// SATA controller, which libvirt lists too) is in the XML.
void Comparison::Pci() {
  std::vector<PciFn> qemu = QemuPci();
  std::map<long long, xmlNodePtr> controllers;  // index -> <controller type='pci'>
  for (xmlNodePtr c : x_.Nodes("/domain/devices/controller[@type='pci']")) controllers[Num(x_.Str("@index", c))] = c;

  for (xmlNodePtr n : x_.Nodes("/domain/devices/*[address/@type='pci']")) {
    const std::string alias = x_.Str("alias/@name", n), label = Label(n);
    const long long bus = Num(x_.Str("address/@bus", n)), slot = Num(x_.Str("address/@slot", n)),
                    function = Num(x_.Str("address/@function", n));
    const bool multifunction = x_.Str("address/@multifunction", n) == "on";
    const auto ctrl = controllers.find(bus);
    if (ctrl == controllers.end()) {
      Wrong(label + ": <address bus='" + Hex(bus) + "'> names no <controller type='pci' index='" +
            std::to_string(bus) + "'>");
      continue;
    }
    const std::string model = x_.Str("@model", ctrl->second);
    const std::string parent = model == "pcie-root" || model == "pci-root" ? "" : x_.Str("alias/@name", ctrl->second);
    const std::string xml_at = "bus " + Hex(bus) + " " + Where(parent, slot, function);
    PciFn* q = nullptr;
    for (PciFn& f : qemu)
      if (!alias.empty() && f.id == alias) q = &f;
    // What the machine makes itself (q35's SATA) has no id in QEMU: a function of its class there.
    const std::string type = x_.Str("@type", n), what = type == "sata" ? "SATA controller"
                                                      : type == "ide"  ? "IDE controller"
                                                      : type == "usb"  ? "USB controller" : "?";
    for (PciFn& f : qemu)
      if (!q && f.id.empty() && f.what == what && f.parent == parent && f.slot == slot && f.function == function) q = &f;
    if (!q) {
      Wrong(label + " at " + xml_at + ": QEMU has no PCI device of that id, nor an id-less " + what + " there");
      continue;
    }
    q->listed = true;
    Checked("pci " + (alias.empty() ? label : alias));
    if (q->parent != parent || q->slot != slot || q->function != function)
      Wrong(label + ": the live XML has it at " + xml_at + ", QEMU at " + Where(q->parent, q->slot, q->function));
    if (q->id.empty()) continue;
    const json mf = QomGet(ask_, alias, "multifunction");
    if (!mf.is_boolean() || mf.get<bool>() != multifunction)
      Wrong(label + ": the live XML has multifunction " + (multifunction ? "on" : "off") + ", QEMU " + mf.dump());
  }
  for (const PciFn& f : qemu)
    if (!f.listed && (!f.id.empty() || (f.parent.empty() && f.what == "SATA controller")))
      Wrong("QEMU's " + f.what + " " + (f.id.empty() ? "(no id)" : f.id) + " at " + Where(f.parent, f.slot, f.function) +
            " is not in the live XML (no element with its alias and a PCI address there)");
}

// A controller's <model name> is the QEMU type of its alias; a root port's <target chassis port>
// are QEMU's properties.
void Comparison::Controllers() {
  for (xmlNodePtr c : x_.Nodes("/domain/devices/controller[model/@name]")) {
    const std::string alias = x_.Str("alias/@name", c), name = x_.Str("model/@name", c);
    Checked("type " + alias);
    if (types_[alias] != name) Wrong(Label(c) + ": <model name='" + name + "'>, QEMU's type '" + types_[alias] + "'");
  }
  for (xmlNodePtr c : x_.Nodes("/domain/devices/controller[@model='pcie-root-port']")) {
    const std::string alias = x_.Str("alias/@name", c);
    Checked("root port " + alias);
    for (const char* prop : {"chassis", "port"}) {
      const json q = QomGet(ask_, alias, prop);
      const std::string xml = x_.Str(std::string("target/@") + prop, c);
      if (!q.is_number() || Num(xml) != q.get<long long>())
        Wrong(Label(c) + ": <target " + prop + "='" + xml + "'>, QEMU's " + prop + " " + q.dump());
    }
  }
}

// <address type='virtio-serial' controller bus port>: the port's bus belongs to that controller's
// device, and its nr is the port.
void Comparison::VirtioSerial() {
  for (xmlNodePtr n : x_.Nodes("/domain/devices/*[address/@type='virtio-serial']")) {
    const std::string alias = x_.Str("alias/@name", n);
    const std::string controller = x_.Str("/domain/devices/controller[@type='virtio-serial'][@index='" +
                                          x_.Str("address/@controller", n) + "']/alias/@name");
    const json bus = QomGet(ask_, alias, "parent_bus"), nr = QomGet(ask_, alias, "nr");
    const std::string want = "/machine/peripheral/" + controller + "/";
    const std::string bus_path = bus.is_string() ? bus.get<std::string>() : bus.dump();
    Checked("virtio-serial " + alias);
    if (controller.empty() || bus_path.rfind(want, 0) != 0 ||
        bus_path.substr(bus_path.rfind('.') + 1) != x_.Str("address/@bus", n))
      Wrong(Label(n) + ": the live XML has it on bus " + x_.Str("address/@bus", n) + " of the virtio-serial controller " +
            x_.Str("address/@controller", n) + " ('" + controller + "'), QEMU on " + bus_path);
    if (!nr.is_number() || nr.get<long long>() != Num(x_.Str("address/@port", n)))
      Wrong(Label(n) + ": port " + x_.Str("address/@port", n) + ", QEMU's nr " + nr.dump());
  }
}

// Each disk's medium, read-only flag and removability as query-block has its device's.
void Comparison::Disks() {
  const json block = Ask(ask_, "query-block");
  if (!block.is_array()) return Wrong(block.dump());
  for (xmlNodePtr n : x_.Nodes("/domain/devices/disk")) {
    const std::string alias = x_.Str("alias/@name", n), dev = x_.Str("target/@dev", n);
    const json* b = nullptr;  // qdev: "sata0-0-0", or "/machine/peripheral/virtio-disk0/virtio-backend"
    for (const json& e : block)
      if (const std::string q = e.value("qdev", ""); q == alias || q.rfind("/machine/peripheral/" + alias + "/", 0) == 0)
        b = &e;
    if (alias.empty() || !b) {
      Wrong(Label(n) + " (" + dev + "): no device of that id in query-block");
      continue;
    }
    Checked("disk " + dev);
    const std::string file = x_.Str("source/@file", n) + x_.Str("source/@dev", n);
    const std::string qemu_file = b->contains("inserted") ? (*b)["inserted"].value("file", "") : "";
    if (file != qemu_file) Wrong(Label(n) + ": source '" + file + "', QEMU's medium '" + qemu_file + "'");
    const std::string device = x_.Str("@device", n);
    if (b->value("removable", false) != (device == "cdrom" || device == "floppy"))
      Wrong(Label(n) + ": device='" + device + "', QEMU's removable " + b->value("removable", json()).dump());
    const bool readonly = x_.Str("count(readonly)", n) != "0";
    if (b->contains("inserted") && (*b)["inserted"].value("ro", false) != readonly)
      Wrong(Label(n) + ": <readonly/> " + (readonly ? "present" : "absent") + ", QEMU's ro " +
            (*b)["inserted"].value("ro", json()).dump());
  }
}

void Comparison::Interfaces() {
  for (xmlNodePtr n : x_.Nodes("/domain/devices/interface")) {
    const json mac = QomGet(ask_, x_.Str("alias/@name", n), "mac");
    Checked("mac " + x_.Str("alias/@name", n));
    if (mac != json(x_.Str("mac/@address", n)))
      Wrong(Label(n) + ": <mac address='" + x_.Str("mac/@address", n) + "'>, QEMU's " + mac.dump());
  }
}

// A serial's tty, a channel's socket: the file of the chardev QEMU's device of that alias uses.
void Comparison::Chardevs() {
  const json list = Ask(ask_, "query-chardev");
  if (!list.is_array()) return Wrong(list.dump());
  std::map<std::string, std::string> files;
  for (const json& c : list) files[c.value("label", "")] = c.value("filename", "");
  for (xmlNodePtr n : x_.Nodes("/domain/devices/serial | /domain/devices/console | /domain/devices/channel")) {
    const json chardev = QomGet(ask_, x_.Str("alias/@name", n), "chardev");
    const std::string file = chardev.is_string() ? files[chardev.get<std::string>()] : chardev.dump();
    const std::string type = x_.Str("@type", n), path = x_.Str("source/@path", n);
    Checked("chardev " + std::string(reinterpret_cast<const char*>(n->name)) + " " + x_.Str("alias/@name", n));
    const bool has_tty = std::string("channel") != reinterpret_cast<const char*>(n->name);  // libvirt: no tty= there
    if (type == "pty" && (file != "pty:" + path || (has_tty && x_.Str("@tty", n) != path)))
      Wrong(Label(n) + ": tty '" + x_.Str("@tty", n) + "', source '" + path + "', QEMU's chardev " + file);
    if (type == "unix" && file.find("unix:" + path + ",") == std::string::npos)
      Wrong(Label(n) + ": source '" + path + "', QEMU's chardev " + file);
  }
}

void Comparison::Graphics() {
  for (xmlNodePtr n : x_.Nodes("/domain/devices/graphics[@type='vnc']")) {
    const json vnc = Ask(ask_, "query-vnc");
    Checked("vnc");
    if (vnc.value("service", "") != x_.Str("@port", n) || vnc.value("host", "") != x_.Str("@listen", n))
      Wrong("<graphics type='vnc'>: port '" + x_.Str("@port", n) + "' listen '" + x_.Str("@listen", n) +
            "', QEMU's " + vnc.dump());
  }
}

// <memory> is what the machine has with its DIMMs; each NUMA cell's memory is QEMU's node's less
// what is plugged there; each DIMM sits where QEMU put it, its backend of its size; the balloon.
void Comparison::Memory() {
  const long long memory = Bytes(x_.Str("/domain/memory"), x_.Str("/domain/memory/@unit"));
  const json summary = Ask(ask_, "query-memory-size-summary");
  Checked("memory");
  if (summary.value("base-memory", 0LL) + summary.value("plugged-memory", 0LL) != memory)
    Wrong("<memory> is " + std::to_string(memory) + " bytes, QEMU's " + summary.dump());
  if (const json balloon = Ask(ask_, "query-balloon"); balloon.contains("actual")) {
    const long long current = Bytes(x_.Str("/domain/currentMemory"), x_.Str("/domain/currentMemory/@unit"));
    Checked("currentMemory");
    if (balloon["actual"].get<long long>() != current)
      Wrong("<currentMemory> is " + std::to_string(current) + " bytes, QEMU's balloon " + balloon.dump());
  }

  const std::string numa = ask_("info numa", true);
  for (xmlNodePtr cell : x_.Nodes("/domain/cpu/numa/cell")) {
    const std::string id = x_.Str("@id", cell);
    std::smatch size, plugged, cpus;
    const bool found = std::regex_search(numa, size, std::regex("node " + id + " size: ([0-9]+) MB")) &&
                       std::regex_search(numa, cpus, std::regex("node " + id + " cpus:([ 0-9]*)\r?\n"));
    const long long plugged_mb = std::regex_search(numa, plugged, std::regex("node " + id + " plugged: ([0-9]+) MB"))
                                     ? std::stoll(plugged[1]) : 0;
    Checked("numa cell " + id);
    const long long xml = Bytes(x_.Str("@memory", cell), x_.Str("@unit", cell));
    if (!found || ((std::stoll(size[1]) - plugged_mb) << 20) != xml)
      Wrong("<cell id='" + id + "'> has " + std::to_string(xml) + " bytes; QEMU's `info numa`:\n" + numa);
    else if (Words(cpus[1]) != CpuList(x_.Str("@cpus", cell)))
      Wrong("<cell id='" + id + "' cpus='" + x_.Str("@cpus", cell) + "'>; QEMU's `info numa`:\n" + numa);
  }

  const json devices = Ask(ask_, "query-memory-devices"), memdevs = Ask(ask_, "query-memdev");
  for (xmlNodePtr n : x_.Nodes("/domain/devices/memory[@model='dimm']")) {
    const std::string alias = x_.Str("alias/@name", n);
    json d;
    for (const json& e : devices.is_array() ? devices : json::array())
      if (e.value("type", "") == "dimm" && e["data"].value("id", "") == alias) d = e["data"];
    const long long size = Bytes(x_.Str("target/size", n), x_.Str("target/size/@unit", n));
    Checked("dimm " + alias);
    if (d.is_null()) {
      Wrong(Label(n) + ": QEMU has no DIMM of that id: " + devices.dump());
      continue;
    }
    json backend;
    const std::string memdev = d.value("memdev", "");
    for (const json& m : memdevs.is_array() ? memdevs : json::array())
      if (m.value("id", "") == memdev.substr(memdev.rfind('/') + 1)) backend = m;
    if (d.value("slot", -1LL) != Num(x_.Str("address/@slot", n)) || d.value("addr", -1LL) != Num(x_.Str("address/@base", n)) ||
        d.value("size", -1LL) != size || d.value("node", -1LL) != Num(x_.Str("target/node", n)) ||
        backend.value("size", -1LL) != size)
      Wrong(Label(n) + ": size " + std::to_string(size) + " node " + x_.Str("target/node", n) + " slot " +
            x_.Str("address/@slot", n) + " base " + x_.Str("address/@base", n) + "; QEMU's DIMM " + d.dump() +
            ", its backend " + backend.dump());
  }
}

void Comparison::Vcpus() {
  const json cpus = Ask(ask_, "query-cpus-fast");
  const std::string current = x_.Str("/domain/vcpu/@current");
  const long long want = Num(current.empty() ? x_.Str("/domain/vcpu") : current);
  Checked("vcpus");
  if (!cpus.is_array() || static_cast<long long>(cpus.size()) != want)
    Wrong("<vcpu> says " + std::to_string(want) + " run, QEMU's query-cpus-fast " + cpus.dump());
}

}  // namespace

LiveXmlVsQemu CompareLiveXmlWithQemu(const std::string& live_xml, const Monitor& ask) {
  LiveXmlVsQemu r;
  const XPathDoc x(live_xml);
  if (!x.ok()) {
    r.mismatch.push_back("the live XML does not parse");
    return r;
  }
  Comparison c(x, ask, &r);
  c.Pci();
  c.Controllers();
  c.VirtioSerial();
  c.Disks();
  c.Interfaces();
  c.Chardevs();
  c.Graphics();
  c.Memory();
  c.Vcpus();
  return r;
}

}  // namespace qlaunch::testing
