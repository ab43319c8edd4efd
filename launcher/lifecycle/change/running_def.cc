#include "launcher/lifecycle/change/running_def.h"

#include <libxml/tree.h>

#include <algorithm>
#include <stdexcept>

#include "domain/parser.h"
#include "domain/vcpu_counts.h"
#include "domain/xml_doc.h"
#include "domain/xml_node.h"
#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Element {
  std::string name;
  int line = 0;
};

xmlNode* DevicesOf(xmlDoc* doc) {
  xmlNode* root = xmlDocGetRootElement(doc);
  for (xmlNode* c = root ? root->children : nullptr; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && domain::NodeName(c) == "devices") return c;
  return nullptr;
}

std::vector<Element> DeviceElements(xmlDoc* doc) {
  std::vector<Element> out;
  xmlNode* devices = DevicesOf(doc);
  for (xmlNode* c = devices ? devices->children : nullptr; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE) out.push_back({domain::NodeName(c), domain::NodeLine(c)});
  return out;
}

std::string Serialize(xmlDoc* doc) {
  xmlChar* buf = nullptr;
  int size = 0;
  xmlDocDumpMemory(doc, &buf, &size);
  std::string out(reinterpret_cast<const char*>(buf), static_cast<size_t>(size));
  xmlFree(buf);
  return out;
}

// Records named by the elements `before` (by name and line) now name the same elements at
// their lines in `after`; `after_index[i]` is where before[i] went (-1: removed).
void Renumber(std::vector<qemu::DeviceRecord>* records, const std::vector<Element>& before,
              const std::vector<Element>& after, const std::vector<int>& after_index) {
  for (qemu::DeviceRecord& r : *records) {
    if (r.line <= 0) continue;
    for (size_t i = 0; i < before.size(); ++i) {
      if (before[i].name != r.element || before[i].line != r.line) continue;
      if (after_index[i] >= 0) r.line = after[static_cast<size_t>(after_index[i])].line;
      break;
    }
  }
}

// The highest libvirt-N used: plan.json's (attach-device), media.json's (change-media, which
// records the next one), and before either the start's (one per disk, from the last up).
unsigned NodeIndexOf(const RunningState& st) {
  unsigned n = static_cast<unsigned>(st.def.devices.disks.size());
  if (st.plan.contains("node_index")) n = st.plan["node_index"].get<unsigned>();
  const json media = json::parse(ReadSmallFile(st.dir / "media.json").value_or("{}"), nullptr, false);
  if (media.is_object() && media.value("next_node_index", 0u) > 0) n = std::max(n, media.value("next_node_index", 0u) - 1);
  if (st.plan.contains("node_index")) return n;
  for (const qemu::DeviceRecord& r : st.records)
    for (const auto& [k, v] : r.props)
      if (k == "drive" && v.rfind("libvirt-", 0) == 0) {
        try {
          n = std::max(n, static_cast<unsigned>(std::stoul(v.substr(8))));
        } catch (const std::exception&) {
        }
      }
  return n;
}

void Save(RunningState* st, const std::string& xml) {
  json plan = st->plan;
  json devices = json::array();
  for (const qemu::DeviceRecord& r : st->records) devices.push_back(qemu::ToJson(r));
  plan["devices"] = std::move(devices);
  plan["node_index"] = st->node_index;
  // The XML first: records that name lines of a running.xml not yet written would be read
  // against domain.xml. A crash between the writes is what change.json recovers.
  AtomicWrite(st->dir / "running.xml", xml);
  AtomicWrite(st->dir / "plan.json", plan.dump(2) + "\n");
  AtomicWrite(st->dir / "devices.json", st->host.dump(2) + "\n");
  st->xml = xml;
  st->xml_file = (st->dir / "running.xml").string();
  st->plan = std::move(plan);
  st->def = domain::ParseDomainXml(xml, st->xml_file);
}

// Writes `doc`, changed in place (no device added or removed), with the records following their
// elements to the lines they have in the text written: the first write of running.xml adds an
// XML declaration, and every line after it moves. `before`: the devices as st->xml has them.
void SaveInPlace(RunningState* st, xmlDoc* doc, const std::vector<Element>& before) {
  const std::string xml = Serialize(doc);
  domain::XmlDoc written = domain::XmlDoc::Parse(xml, st->xml_file);
  const std::vector<Element> after = DeviceElements(written.MutableDoc());
  if (after.size() != before.size()) throw std::logic_error("SaveInPlace: the devices changed");
  std::vector<int> index(before.size());
  for (size_t i = 0; i < before.size(); ++i) index[i] = static_cast<int>(i);
  Renumber(&st->records, before, after, index);
  Save(st, xml);
}

size_t InterfacePosition(const std::vector<Element>& elements, size_t index) {
  size_t n = 0;
  for (size_t i = 0; i < index; ++i) n += elements[i].name == "interface";
  return n;
}

}  // namespace

fs::path RunningXmlPath(const fs::path& domain_dir) {
  std::error_code ec;
  return fs::exists(domain_dir / "running.xml", ec) ? domain_dir / "running.xml" : domain_dir / "domain.xml";
}

RunningState LoadRunningState(const fs::path& domain_dir) {
  RunningState st;
  st.dir = domain_dir;
  const fs::path xml_path = RunningXmlPath(domain_dir);
  st.xml_file = xml_path.string();
  std::optional<std::string> xml = ReadSmallFile(xml_path);
  if (!xml) throw std::runtime_error("cannot read " + st.xml_file);
  st.xml = *xml;
  st.def = domain::ParseDomainXml(st.xml, st.xml_file);
  st.plan = json::parse(ReadSmallFile(domain_dir / "plan.json").value_or(""), nullptr, false);
  if (!st.plan.is_object() || !st.plan.contains("devices"))
    throw std::runtime_error((domain_dir / "plan.json").string() +
                             " records no devices (the domain was started by an older qlaunch); restart it to change its devices");
  for (const json& r : st.plan["devices"]) st.records.push_back(qemu::DeviceRecordFromJson(r));
  st.host = json::parse(ReadSmallFile(domain_dir / "devices.json").value_or("{}"), nullptr, false);
  if (!st.host.is_object()) st.host = json::object();
  st.node_index = NodeIndexOf(st);
  return st;
}

void CommitAttach(RunningState* st, const std::string& element_xml, qemu::DeviceRecord record, unsigned node_index,
                  const json& host_nic) {
  domain::XmlDoc doc = domain::XmlDoc::Parse(st->xml, st->xml_file);
  domain::XmlDoc fragment = domain::XmlDoc::Parse(element_xml, "device");
  const std::vector<Element> before = DeviceElements(doc.MutableDoc());
  xmlNode* devices = DevicesOf(doc.MutableDoc());
  if (!devices) devices = xmlNewChild(xmlDocGetRootElement(doc.MutableDoc()), nullptr, BAD_CAST "devices", nullptr);
  xmlNode* copy = xmlDocCopyNode(const_cast<xmlNode*>(fragment.Root()), doc.MutableDoc(), 1);
  xmlNode* indent = xmlNewDocText(doc.MutableDoc(), BAD_CAST "\n    ");
  xmlNode* last = devices->last;
  if (last && last->type == XML_TEXT_NODE) {
    xmlAddPrevSibling(last, indent);
    xmlAddPrevSibling(last, copy);
  } else {
    xmlAddChild(devices, indent);
    xmlAddChild(devices, copy);
    xmlAddChild(devices, xmlNewDocText(doc.MutableDoc(), BAD_CAST "\n  "));
  }
  const std::string xml = Serialize(doc.MutableDoc());
  domain::XmlDoc written = domain::XmlDoc::Parse(xml, st->xml_file);
  const std::vector<Element> after = DeviceElements(written.MutableDoc());
  std::vector<int> index(before.size());
  for (size_t i = 0; i < before.size(); ++i) index[i] = static_cast<int>(i);
  Renumber(&st->records, before, after, index);
  record.line = after.back().line;
  st->records.push_back(std::move(record));
  st->node_index = node_index;
  if (!host_nic.is_null()) {
    if (!st->host.contains("interfaces")) st->host["interfaces"] = json::array();
    st->host["interfaces"].push_back(host_nic);
  }
  Save(st, xml);
}

void CommitDetach(RunningState* st, const std::string& name, int line) {
  domain::XmlDoc doc = domain::XmlDoc::Parse(st->xml, st->xml_file);
  const std::vector<Element> before = DeviceElements(doc.MutableDoc());
  xmlNode* devices = DevicesOf(doc.MutableDoc());
  size_t gone = before.size();
  size_t i = 0;
  for (xmlNode* c = devices ? devices->children : nullptr; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (domain::NodeName(c) == name && domain::NodeLine(c) == line) {
      gone = i;
      if (c->prev && c->prev->type == XML_TEXT_NODE) {
        xmlNode* ws = c->prev;
        xmlUnlinkNode(ws);
        xmlFreeNode(ws);
      }
      xmlUnlinkNode(c);
      xmlFreeNode(c);
      break;
    }
    ++i;
  }
  if (gone == before.size())
    throw std::runtime_error(st->xml_file + ": no <" + name + "> at line " + std::to_string(line) + " to remove");
  const std::string xml = Serialize(doc.MutableDoc());
  domain::XmlDoc written = domain::XmlDoc::Parse(xml, st->xml_file);
  const std::vector<Element> after = DeviceElements(written.MutableDoc());
  std::vector<int> index(before.size());
  for (size_t k = 0; k < before.size(); ++k) index[k] = k == gone ? -1 : static_cast<int>(k < gone ? k : k - 1);
  std::erase_if(st->records, [&](const qemu::DeviceRecord& r) { return r.element == name && r.line == line; });
  Renumber(&st->records, before, after, index);
  if (name == "interface" && st->host.contains("interfaces")) {
    json& nics = st->host["interfaces"];
    const size_t pos = InterfacePosition(before, gone);
    if (nics.is_array() && pos < nics.size()) nics.erase(pos);
  }
  Save(st, xml);
}

void CommitVcpus(RunningState* st, unsigned boot, unsigned current) {
  if (domain::CurrentVcpus(st->def.vcpu) == current && !st->def.vcpu.states.empty() == (current > boot)) return;
  domain::XmlDoc doc = domain::XmlDoc::Parse(st->xml, st->xml_file);
  const std::vector<Element> before = DeviceElements(doc.MutableDoc());
  xmlNode* root = xmlDocGetRootElement(doc.MutableDoc());
  xmlNode* vcpu = nullptr;
  xmlNode* states = nullptr;
  for (xmlNode* c = root ? root->children : nullptr; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (!vcpu && domain::NodeName(c) == "vcpu") vcpu = c;
    if (!states && domain::NodeName(c) == "vcpus") states = c;
  }
  if (!vcpu) throw std::runtime_error(st->xml_file + ": no <vcpu> to record " + std::to_string(current) + " vCPUs in");
  const auto* attr = reinterpret_cast<const xmlChar*>("current");
  const unsigned count = st->def.vcpu.count;
  if (current >= count) {
    xmlUnsetProp(vcpu, attr);
  } else {
    xmlSetProp(vcpu, attr, reinterpret_cast<const xmlChar*>(std::to_string(current).c_str()));
  }
  // <vcpus>, as libvirt's live XML has it once a vCPU was plugged: the boot vCPUs, the plugged
  // ones in their plugging order (setvcpus plugs first to last), the others waiting.
  if (states) {
    if (states->prev && states->prev->type == XML_TEXT_NODE) {
      xmlNode* space = states->prev;
      xmlUnlinkNode(space);
      xmlFreeNode(space);
    }
    xmlUnlinkNode(states);
    xmlFreeNode(states);
  }
  if (current > boot) {
    auto x = [](const std::string& t) { return reinterpret_cast<const xmlChar*>(t.c_str()); };
    states = xmlNewNode(nullptr, x("vcpus"));
    for (unsigned id = 0; id < count; ++id) {
      xmlAddChild(states, xmlNewText(x("\n    ")));
      xmlNode* v = xmlNewChild(states, nullptr, x("vcpu"), nullptr);
      xmlSetProp(v, x("id"), x(std::to_string(id)));
      xmlSetProp(v, x("enabled"), x(id < current ? "yes" : "no"));
      xmlSetProp(v, x("hotpluggable"), x(id < boot ? "no" : "yes"));
      if (id < current) xmlSetProp(v, x("order"), x(std::to_string(id + 1)));
    }
    xmlAddChild(states, xmlNewText(x("\n  ")));
    xmlNode* placed = xmlAddNextSibling(vcpu, states);
    xmlAddPrevSibling(placed, xmlNewText(x("\n  ")));
  }
  SaveInPlace(st, doc.MutableDoc(), before);
}

void CommitMemoryRequested(RunningState* st, int line, uint64_t requested_bytes) {
  for (const domain::MemoryDevice& m : st->def.devices.memory)
    if (m.line == line && m.requested_bytes.value_or(0) == requested_bytes) return;
  domain::XmlDoc doc = domain::XmlDoc::Parse(st->xml, st->xml_file);
  const std::vector<Element> before = DeviceElements(doc.MutableDoc());
  xmlNode* devices = DevicesOf(doc.MutableDoc());
  xmlNode* target = nullptr;
  for (xmlNode* c = devices ? devices->children : nullptr; c && !target; c = c->next)
    if (c->type == XML_ELEMENT_NODE && domain::NodeName(c) == "memory" && domain::NodeLine(c) == line)
      for (xmlNode* t = c->children; t && !target; t = t->next)
        if (t->type == XML_ELEMENT_NODE && domain::NodeName(t) == "target") target = t;
  if (!target) throw std::runtime_error(st->xml_file + ": no <memory><target> at line " + std::to_string(line));
  xmlNode* requested = nullptr;
  for (xmlNode* t = target->children; t && !requested; t = t->next)
    if (t->type == XML_ELEMENT_NODE && domain::NodeName(t) == "requested") requested = t;
  const std::string kib = std::to_string(requested_bytes / 1024);
  // Replaced in place, or added on the line of </target>: the lines of the devices stay.
  if (!requested) requested = xmlNewChild(target, nullptr, reinterpret_cast<const xmlChar*>("requested"), nullptr);
  xmlNodeSetContent(requested, reinterpret_cast<const xmlChar*>(kib.c_str()));
  xmlSetProp(requested, reinterpret_cast<const xmlChar*>("unit"), reinterpret_cast<const xmlChar*>("KiB"));
  SaveInPlace(st, doc.MutableDoc(), before);
}

void CommitMemoryDevices(RunningState* st, const json& backend, const json& device, const std::string& remove_id,
                         const std::string& remove_memdev, uint64_t memory_bytes) {
  for (const char* key : {"backends", "memory_devices"})
    if (!st->plan.contains(key) || !st->plan[key].is_array()) st->plan[key] = json::array();
  if (!backend.is_null()) st->plan["backends"].push_back(backend);
  if (!device.is_null()) st->plan["memory_devices"].push_back(device);
  auto drop = [](json& list, const std::string& id) {
    if (id.empty()) return;
    json kept = json::array();
    for (const json& e : list)
      if (e.value("id", "") != id) kept.push_back(e);
    list = std::move(kept);
  };
  drop(st->plan["memory_devices"], remove_id);
  drop(st->plan["backends"], remove_memdev);
  if (!remove_id.empty()) std::erase_if(st->records, [&](const qemu::DeviceRecord& r) { return r.id == remove_id; });
  domain::XmlDoc doc = domain::XmlDoc::Parse(st->xml, st->xml_file);
  const std::vector<Element> before = DeviceElements(doc.MutableDoc());
  xmlNode* root = xmlDocGetRootElement(doc.MutableDoc());
  xmlNode* memory = nullptr;
  for (xmlNode* c = root ? root->children : nullptr; c && !memory; c = c->next)
    if (c->type == XML_ELEMENT_NODE && domain::NodeName(c) == "memory") memory = c;
  if (!memory) throw std::runtime_error(st->xml_file + ": no <memory> to record " + std::to_string(memory_bytes) + " bytes in");
  xmlNodeSetContent(memory, reinterpret_cast<const xmlChar*>(std::to_string(memory_bytes / 1024).c_str()));
  xmlSetProp(memory, reinterpret_cast<const xmlChar*>("unit"), reinterpret_cast<const xmlChar*>("KiB"));
  SaveInPlace(st, doc.MutableDoc(), before);
}

void WriteChange(const fs::path& domain_dir, const json& change) {
  AtomicWrite(domain_dir / "change.json", change.dump(2) + "\n");
}

std::optional<json> ReadChange(const fs::path& domain_dir) {
  std::optional<std::string> text = ReadSmallFile(domain_dir / "change.json");
  if (!text) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

void ClearChange(const fs::path& domain_dir) {
  std::error_code ec;
  fs::remove(domain_dir / "change.json", ec);
}

std::vector<json> PendingDetaches(const fs::path& domain_dir) {
  std::vector<json> out;
  json j = json::parse(ReadSmallFile(domain_dir / "detaching.json").value_or("[]"), nullptr, false);
  if (j.is_array())
    for (json& e : j)
      if (e.is_object()) out.push_back(std::move(e));
  return out;
}

void SetPendingDetaches(const fs::path& domain_dir, const std::vector<json>& pending) {
  std::error_code ec;
  if (pending.empty()) {
    fs::remove(domain_dir / "detaching.json", ec);
    return;
  }
  AtomicWrite(domain_dir / "detaching.json", json(pending).dump(2) + "\n");
}

}  // namespace qlaunch::launcher
