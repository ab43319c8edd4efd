#include "launcher/lifecycle/change/live_xml.h"

#include <libxml/tree.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "domain/xml_doc.h"
#include "domain/xml_node.h"
#include "launcher/lifecycle/change/xml_edit.h"

namespace qlaunch::launcher {

using nlohmann::json;

namespace {

using domain::ElementChildren;
using domain::NodeAttr;
using domain::NodeLine;
using domain::NodeName;

using xml_edit::AddChild;
using xml_edit::Child;
using xml_edit::SetAttr;
using xml_edit::X;

// A number as libvirt writes it ("3", "0x03"); 0 for anything else.
unsigned long Num(const std::string& s) { return std::strtoul(s.c_str(), nullptr, 0); }

std::string Hex(unsigned v, int width) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%0*x", width, v);
  return b;
}

// Where the alias and the address go: libvirt writes them last, the alias before the address.
void AddAlias(xmlNode* dev, const std::string& id) {
  if (id.empty() || Child(dev, "alias")) return;
  SetAttr(AddChild(dev, "alias", Child(dev, "address")), "name", id);
}

std::string Prop(const json& rec, const std::string& key) {
  for (const json& kv : rec.value("props", json::array()))
    if (kv.size() == 2 && kv[0] == key) return kv[1];
  return "";
}

unsigned BusNumber(const std::string& bus) {  // "pcie.0", "pci.0" -> 0; "pci.3" -> 3
  const size_t dot = bus.rfind('.');
  return dot == std::string::npos ? 0 : static_cast<unsigned>(Num(bus.substr(dot + 1)));
}

void AddPciAddress(xmlNode* dev, const json& pci) {
  xmlNode* a = Child(dev, "address");
  if (a && NodeAttr(a, "type").value_or("") != "pci") return;  // the XML's own (drive, usb, ...)
  if (!a) a = AddChild(dev, "address");
  SetAttr(a, "type", "pci");
  SetAttr(a, "domain", "0x0000");
  SetAttr(a, "bus", Hex(BusNumber(pci.value("bus", "")), 2));
  SetAttr(a, "slot", Hex(pci.value("slot", 0u), 2));
  SetAttr(a, "function", Hex(pci.value("function", 0u), 1));
  if (pci.value("multifunction", false)) SetAttr(a, "multifunction", "on");
}

// virtserialport / virtconsole: bus "virtio-serial0.0", nr.
void AddVirtioSerialAddress(xmlNode* dev, const json& rec) {
  const std::string bus = Prop(rec, "bus"), nr = Prop(rec, "nr");
  if (bus.rfind("virtio-serial", 0) != 0 || nr.empty() || Child(dev, "address")) return;
  const size_t dot = bus.rfind('.');
  xmlNode* a = AddChild(dev, "address");
  SetAttr(a, "type", "virtio-serial");
  SetAttr(a, "controller", bus.substr(13, dot - 13));
  SetAttr(a, "bus", bus.substr(dot + 1));
  SetAttr(a, "port", nr);
}

// The number at the end of a controller's id ("pci.3" -> 3, "usb" -> 0, "scsi1" -> 1).
std::string IndexOfId(const std::string& id) {
  size_t i = id.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(id[i - 1]))) --i;
  return i == id.size() ? "0" : id.substr(i);
}

// The <controller type model> of a controller's QEMU driver.
std::pair<std::string, std::string> ControllerOf(const std::string& driver) {
  static const std::pair<const char*, std::pair<const char*, const char*>> kTable[] = {
      {"piix3-usb-uhci", {"usb", "piix3-uhci"}},   {"ich9-usb-ehci1", {"usb", "ich9-ehci1"}},
      {"ich9-usb-uhci1", {"usb", "ich9-uhci1"}},   {"ich9-usb-uhci2", {"usb", "ich9-uhci2"}},
      {"ich9-usb-uhci3", {"usb", "ich9-uhci3"}},   {"qemu-xhci", {"usb", "qemu-xhci"}},
      {"nec-usb-xhci", {"usb", "nec-xhci"}},       {"virtio-scsi-pci", {"scsi", "virtio-scsi"}},
      {"lsi", {"scsi", "lsilogic"}},               {"virtio-serial-pci", {"virtio-serial", ""}},
      {"ahci", {"sata", ""}},                      {"pcie-root-port", {"pci", "pcie-root-port"}},
      {"pci-bridge", {"pci", "pci-bridge"}},       {"pcie-pci-bridge", {"pci", "pcie-to-pci-bridge"}},
      {"i82801b11-bridge", {"pci", "dmi-to-pci-bridge"}}};
  for (const auto& [d, tm] : kTable)
    if (driver == d) return {tm.first, tm.second};
  return {"", ""};
}

// A PCI controller's <model name> and <target> as libvirt shows them.
void AddPciControllerDetails(xmlNode* c, const json& rec) {
  const std::string model = NodeAttr(c, "model").value_or("");
  if (model.empty() || model == "pci-root" || model == "pcie-root") return;
  if (!Child(c, "model")) SetAttr(AddChild(c, "model", c->children ? c->children : nullptr), "name", rec.value("driver", ""));
  if (Child(c, "target")) return;
  xmlNode* before = Child(c, "alias") ? Child(c, "alias") : Child(c, "address");
  if (model == "pcie-root-port" && !Prop(rec, "chassis").empty()) {
    xmlNode* t = AddChild(c, "target", before);
    SetAttr(t, "chassis", Prop(rec, "chassis"));
    SetAttr(t, "port", Prop(rec, "port"));
  } else if (model == "pci-bridge" && !Prop(rec, "chassis_nr").empty()) {
    SetAttr(AddChild(c, "target", before), "chassisNr", Prop(rec, "chassis_nr"));
  }
}

// Fills in one device element of the XML from its record.
void FillDevice(xmlNode* dev, const json& rec) {
  std::string id = rec.value("id", "");
  // A USB companion has no id of its own: libvirt shows its master's alias and index ("usb.0").
  if (id.empty() && NodeName(dev) == "controller")
    id = Prop(rec, "masterbus").substr(0, Prop(rec, "masterbus").find('.'));
  AddAlias(dev, id);
  if (rec.contains("pci")) AddPciAddress(dev, rec["pci"]);
  else AddVirtioSerialAddress(dev, rec);
  if (NodeName(dev) == "controller") {
    if (!NodeAttr(dev, "index") && !id.empty()) SetAttr(dev, "index", IndexOfId(id));
    if (NodeAttr(dev, "type").value_or("") == "pci") AddPciControllerDetails(dev, rec);
  }
}

// <interface>: the MAC chosen, the tap's name, the model.
void FillInterface(xmlNode* nic, const json& rec, const json& host) {
  if (!Child(nic, "mac")) {
    std::string mac = Prop(rec, "mac");
    if (mac.empty()) mac = host.value("mac", "");
    if (!mac.empty()) SetAttr(AddChild(nic, "mac", nic->children), "address", mac);
  }
  const std::string tap = host.value("tap", "");
  if (!tap.empty() && !Child(nic, "target")) {
    xmlNode* after_source = Child(nic, "source") ? Child(nic, "source")->next : nullptr;
    SetAttr(AddChild(nic, "target", after_source ? after_source : Child(nic, "model")), "dev", tap);
  }
  if (!Child(nic, "model") && !host.value("model", "").empty())
    SetAttr(AddChild(nic, "model", Child(nic, "alias")), "type", host["model"]);
}

// <graphics>: the port bound, and where it listens.
void FillGraphics(xmlNode* g, const json& host) {
  const int port = host.value("port", 0);
  if (port > 0) SetAttr(g, "port", std::to_string(port));
  const std::string listen = host.value("listen", "");
  if (listen.empty()) return;
  if (!NodeAttr(g, "listen")) SetAttr(g, "listen", listen);
  if (!Child(g, "listen")) {
    xmlNode* l = AddChild(g, "listen", g->children);
    SetAttr(l, "type", "address");
    SetAttr(l, "address", listen);
  }
}

// pty chardevs: tty= and <source path>; unix channels without a path: the state dir's socket.
void FillChardev(xmlNode* c, const std::string& chardev_id, const LiveXmlInput& in) {
  const std::string type = NodeAttr(c, "type").value_or("");
  xmlNode* source = Child(c, "source");
  if (type == "pty") {
    auto it = in.ptys.find(chardev_id);
    if (it == in.ptys.end()) return;
    if (NodeName(c) != "channel") SetAttr(c, "tty", it->second);
    if (!source) source = AddChild(c, "source", c->children);
    SetAttr(source, "path", it->second);
  } else if (type == "unix" && !in.channel_dir.empty() && (!source || !NodeAttr(source, "path"))) {
    xmlNode* target = Child(c, "target");
    const std::string name = target ? NodeAttr(target, "name").value_or("") : "";
    if (name.empty()) return;
    if (!source) source = AddChild(c, "source", c->children);
    SetAttr(source, "mode", NodeAttr(source, "mode").value_or("bind"));
    SetAttr(source, "path", in.channel_dir + "/" + name);
  }
}

// A new device element where libvirt keeps its kind: after the last element of the first of
// `after` the XML has (the same kind first), else first.
xmlNode* AddDevice(xmlNode* devices, const char* name, std::initializer_list<const char*> after) {
  for (const char* kind : after) {
    const auto same = ElementChildren(devices, kind);
    if (same.empty()) continue;
    xmlNode* n = xmlNewDocNode(devices->doc, nullptr, X(name), nullptr);
    return xmlAddNextSibling(const_cast<xmlNode*>(same.back()), n);
  }
  return AddChild(devices, name, devices->children);
}

// A controller element the XML does not have: <controller type index [model]>, where libvirt
// inserts it: among those of its type in index order, else after the controllers (or disks).
xmlNode* NewController(xmlNode* devices, const std::string& type, const std::string& index, const std::string& model) {
  xmlNode* c = nullptr;
  const xmlNode* last_of_type = nullptr;
  for (const xmlNode* other : ElementChildren(devices, "controller")) {
    if (NodeAttr(other, "type").value_or("") != type) continue;
    if (Num(NodeAttr(other, "index").value_or("0")) > Num(index)) {
      c = xmlAddPrevSibling(const_cast<xmlNode*>(other), xmlNewDocNode(devices->doc, nullptr, X("controller"), nullptr));
      break;
    }
    last_of_type = other;
  }
  if (!c && last_of_type)
    c = xmlAddNextSibling(const_cast<xmlNode*>(last_of_type), xmlNewDocNode(devices->doc, nullptr, X("controller"), nullptr));
  if (!c) c = AddDevice(devices, "controller", {"controller", "disk", "emulator"});
  SetAttr(c, "type", type);
  SetAttr(c, "index", index);
  if (!model.empty()) SetAttr(c, "model", model);
  return c;
}

xmlNode* FindController(xmlNode* devices, const std::string& type, const std::string& index) {
  for (const xmlNode* c : ElementChildren(devices, "controller"))
    if (NodeAttr(c, "type").value_or("") == type && NodeAttr(c, "index").value_or("0") == index)
      return const_cast<xmlNode*>(c);
  return nullptr;
}

// Does a disk sit on the IDE bus (bus='ide', or no bus and an hdX name)?
bool HasIdeDisk(xmlNode* devices) {
  for (const xmlNode* disk : ElementChildren(devices, "disk"))
    for (const xmlNode* t : ElementChildren(disk, "target")) {
      const std::string bus = NodeAttr(t, "bus").value_or("");
      if (bus == "ide" || (bus.empty() && NodeAttr(t, "dev").value_or("").rfind("hd", 0) == 0)) return true;
    }
  return false;
}

// The machine's own controllers, which have no -device: the PCI root, and the SATA controller
// of q35 (always listed) or the IDE controller of pc (listed, as libvirt does, when a disk is on
// it or the XML names it).
void AddBuiltinControllers(xmlNode* devices, bool q35) {
  xmlNode* root = FindController(devices, "pci", "0");
  if (!root) root = NewController(devices, "pci", "0", q35 ? "pcie-root" : "pci-root");
  if (!NodeAttr(root, "index")) SetAttr(root, "index", "0");
  AddAlias(root, q35 ? "pcie.0" : "pci.0");
  const char* type = q35 ? "sata" : "ide";
  xmlNode* disks = FindController(devices, type, "0");
  if (!disks && !q35 && !HasIdeDisk(devices)) return;
  if (!disks) disks = NewController(devices, type, "0", "");
  if (!NodeAttr(disks, "index")) SetAttr(disks, "index", "0");
  AddAlias(disks, "ide");
  AddPciAddress(disks, {{"bus", "0"}, {"slot", q35 ? 0x1f : 1}, {"function", q35 ? 2 : 1}});
}

bool IsQ35(const xmlNode* root) {
  for (const xmlNode* os : ElementChildren(root, "os"))
    for (const xmlNode* t : ElementChildren(os, "type")) {
      const std::string m = NodeAttr(t, "machine").value_or("");
      if (m == "q35" || m.rfind("pc-q35-", 0) == 0) return true;
    }
  return false;
}

// <currentMemory> as virsh dumpxml shows a running domain's: always there, the balloon's actual
// size when QEMU reports one, else as given (or <memory>).
void SetCurrentMemory(xmlNode* root, std::optional<uint64_t> balloon_bytes) {
  xmlNode* memory = Child(root, "memory");
  xmlNode* current = Child(root, "currentMemory");
  if (!current && memory) {
    current = xmlAddNextSibling(memory, xmlCopyNode(memory, 1));
    xmlNodeSetName(current, X("currentMemory"));
  }
  if (!current || !balloon_bytes) return;
  xmlNodeSetContent(current, X(std::to_string(*balloon_bytes / 1024)));
  SetAttr(current, "unit", "KiB");
}

}  // namespace

std::string LiveDomainXml(const LiveXmlInput& in) {
  if (!in.plan.is_object() || !in.plan.contains("devices"))
    throw std::runtime_error(in.file + ": the domain's plan.json records no devices (it was started by a qlaunch "
                             "older than dumpxml); `dumpxml --inactive` prints the XML it was started with");
  domain::XmlDoc doc = domain::XmlDoc::Parse(in.domain_xml, in.file);
  xmlNode* root = xmlDocGetRootElement(doc.MutableDoc());
  if (in.id) SetAttr(root, "id", std::to_string(*in.id));
  SetCurrentMemory(root, in.balloon_bytes);
  xmlNode* devices = Child(root, "devices");
  if (!devices) devices = AddChild(root, "devices");

  // Each record goes to the element of its line (the first unused one of its name there).
  std::vector<json> records(in.plan["devices"].begin(), in.plan["devices"].end());
  std::vector<bool> used(records.size(), false);
  auto record_of = [&](const xmlNode* el) -> const json* {
    for (size_t i = 0; i < records.size(); ++i)
      if (!used[i] && records[i].value("line", 0) == NodeLine(el) && records[i].value("element", "") == NodeName(el)) {
        used[i] = true;
        return &records[i];
      }
    return nullptr;
  };
  const json host = in.devices.is_object() ? in.devices : json::object();
  const json host_nics = host.value("interfaces", json::array());
  const json host_graphics = host.value("graphics", json::array());
  size_t nic = 0, graphics = 0, memory = 0;
  std::string first_serial_id;
  const json memory_devices = in.plan.value("memory_devices", json::array());
  for (const xmlNode* cel : ElementChildren(devices)) {
    xmlNode* el = const_cast<xmlNode*>(cel);
    const std::string name = NodeName(el);
    const json* rec = record_of(el);
    if (rec) FillDevice(el, *rec);
    if (name == "interface" && rec) FillInterface(el, *rec, nic < host_nics.size() ? host_nics[nic] : json::object());
    if (name == "interface") ++nic;
    if (name == "graphics" && graphics < host_graphics.size()) FillGraphics(el, host_graphics[graphics]);
    if (name == "graphics") ++graphics;
    if (name == "serial" || name == "console" || name == "channel") {
      std::string id = rec ? rec->value("id", "") : "";
      if (name == "serial" && first_serial_id.empty()) first_serial_id = id;
      // A <console> on the serial port is that serial, as libvirt shows it.
      if (!rec && name == "console") {
        const xmlNode* target = Child(el, "target");
        if ((!target || NodeAttr(target, "type").value_or("serial") == "serial") && !first_serial_id.empty()) {
          id = first_serial_id;
          AddAlias(el, id);
        }
      }
      if (!id.empty()) FillChardev(el, "char" + id, in);
    }
    if (name == "memory" && memory < memory_devices.size()) {
      const json& m = memory_devices[memory++];
      if (m.value("driver", "") == "virtio-mem-pci") continue;  // a PCI device: its record filled it
      const std::string id = m.value("id", "");
      AddAlias(el, id);
      xmlNode* a = Child(el, "address");
      if (!a) a = AddChild(el, "address");
      SetAttr(a, "type", "dimm");
      if (m.contains("slot")) SetAttr(a, "slot", std::to_string(m["slot"].get<unsigned>()));
      std::optional<uint64_t> base;
      if (m.contains("addr")) base = m["addr"].get<uint64_t>();
      if (auto it = in.dimm_bases.find(id); it != in.dimm_bases.end()) base = it->second;
      if (base) {
        char b[24];
        std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(*base));
        SetAttr(a, "base", b);
      }
    }
  }

  // What the XML left implied: controllers the start added, the default balloon and video.
  for (size_t i = 0; i < records.size(); ++i) {
    if (used[i]) continue;
    const json& r = records[i];
    const std::string element = r.value("element", "");
    if (element == "controller" && !r.value("id", "").empty()) {
      auto [type, model] = ControllerOf(r.value("driver", ""));
      if (type.empty()) continue;
      xmlNode* c = FindController(devices, type, IndexOfId(r["id"]));
      if (!c) c = NewController(devices, type, IndexOfId(r["id"]), model);
      FillDevice(c, r);
    } else if (element == "memballoon" && r.value("line", 0) == 0 && !Child(devices, "memballoon")) {
      xmlNode* b = AddDevice(devices, "memballoon", {"video", "sound", "graphics", "input", "channel", "console",
                                                     "serial", "interface", "controller", "disk", "emulator"});
      SetAttr(b, "model", "virtio");
      FillDevice(b, r);
    } else if (element == "video" && r.value("line", 0) == 0 && r.value("driver", "") == "cirrus-vga" &&
               !Child(devices, "video")) {  // the adapter a display implies, with libvirt's defaults
      xmlNode* v = AddDevice(devices, "video", {"audio", "sound", "graphics", "input", "channel", "console", "serial",
                                                "interface", "controller", "disk", "emulator"});
      xmlNode* m = AddChild(v, "model");
      for (const auto& [k, val] : {std::pair{"type", "cirrus"}, {"vram", "16384"}, {"heads", "1"}, {"primary", "yes"}})
        SetAttr(m, k, val);
      FillDevice(v, r);
    }
  }
  AddBuiltinControllers(devices, IsQ35(root));
  return xml_edit::WriteIndented(doc.MutableDoc());
}

}  // namespace qlaunch::launcher
