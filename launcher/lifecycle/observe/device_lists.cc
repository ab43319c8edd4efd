#include "launcher/lifecycle/observe/device_lists.h"

#include "domain/xml_doc.h"
#include "domain/xml_node.h"

namespace qlaunch::launcher {

using nlohmann::json;

namespace {

using domain::ElementChildren;
using domain::NodeAttr;

std::string AttrOfChild(const xmlNode* node, const char* child, const char* attr) {
  for (const xmlNode* c : ElementChildren(node, child))
    if (auto v = NodeAttr(c, attr)) return *v;
  return "";
}

// What virsh names as a disk's source: its file, device, directory, volume or network name.
std::string DiskSource(const xmlNode* disk) {
  for (const xmlNode* s : ElementChildren(disk, "source"))
    for (const char* attr : {"file", "dev", "dir", "volume", "name"})
      if (auto v = NodeAttr(s, attr)) return *v;
  return "";
}

std::string NicSource(const xmlNode* nic) {
  for (const xmlNode* s : ElementChildren(nic, "source"))
    for (const char* attr : {"bridge", "network", "dev", "name"})
      if (auto v = NodeAttr(s, attr)) return *v;
  return "";
}

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

}  // namespace

std::vector<const xmlNode*> DevicesNamed(const domain::XmlDoc& doc, const char* name) {
  std::vector<const xmlNode*> out;
  for (const xmlNode* devices : ElementChildren(doc.Root(), "devices"))
    for (const xmlNode* d : ElementChildren(devices, name)) out.push_back(d);
  return out;
}


std::vector<BlockRow> BlockDevices(const std::string& domain_xml, const std::string& file) {
  const domain::XmlDoc doc = domain::XmlDoc::Parse(domain_xml, file);
  std::vector<BlockRow> out;
  for (const xmlNode* d : DevicesNamed(doc, "disk"))
    out.push_back({NodeAttr(d, "type").value_or("file"), NodeAttr(d, "device").value_or("disk"),
                   AttrOfChild(d, "target", "dev"), DiskSource(d)});
  return out;
}

std::vector<InterfaceRow> Interfaces(const std::string& domain_xml, const std::string& file) {
  const domain::XmlDoc doc = domain::XmlDoc::Parse(domain_xml, file);
  std::vector<InterfaceRow> out;
  for (const xmlNode* n : DevicesNamed(doc, "interface"))
    out.push_back({AttrOfChild(n, "target", "dev"), NodeAttr(n, "type").value_or(""), NicSource(n),
                   AttrOfChild(n, "model", "type"), AttrOfChild(n, "mac", "address")});
  return out;
}

json ToJson(const std::vector<BlockRow>& rows) {
  json out = json::array();
  for (const BlockRow& r : rows)
    out.push_back({{"type", r.type}, {"device", r.device}, {"target", r.target}, {"source", OrNull(r.source)}});
  return out;
}

json ToJson(const std::vector<InterfaceRow>& rows) {
  json out = json::array();
  for (const InterfaceRow& r : rows)
    out.push_back({{"interface", OrNull(r.interface)}, {"type", r.type}, {"source", OrNull(r.source)},
                   {"model", OrNull(r.model)}, {"mac", OrNull(r.mac)}});
  return out;
}

}  // namespace qlaunch::launcher
