#include "support/sequence_checks.h"

#include <map>
#include <set>

#include "launcher/lifecycle/change/pci_addresses_of.h"
#include "support/xpath_doc.h"

namespace qlaunch::testing::seq {

namespace {

using nlohmann::json;

// The live XML, read with XPath.
using LiveXml = XPathDoc;

uint64_t Num(const std::string& s) {
  return s.empty() || s.find_first_not_of("0123456789") != std::string::npos ? 0 : std::stoull(s);
}

// <memory unit='KiB'>, <currentMemory>, a DIMM's <size>: in KiB (qlaunch prints KiB).
uint64_t Kib(const LiveXml& x, const std::string& expr, xmlNodePtr node = nullptr) {
  const std::string unit = x.Str(expr + "/@unit", node);
  const uint64_t n = Num(x.Str(expr, node));
  return unit == "MiB" ? n * 1024 : unit == "GiB" ? n << 20 : unit == "bytes" || unit == "b" ? n / 1024 : n;
}

// A drive's device id in query-block: "ide0-1-0", or the QOM path of a virtio-blk's backend
// ("/machine/peripheral/virtio-disk0/virtio-backend").
std::string DriveId(const json& b) {
  std::string q = b.value("qdev", "");
  const std::string prefix = "/machine/peripheral/";
  if (q.rfind(prefix, 0) == 0) q = q.substr(prefix.size(), q.find('/', prefix.size()) - prefix.size());
  return q;
}

void ModelChecks(const LiveXml& x, const ModelState& m, const SequenceGuest& guest, std::vector<std::string>* out) {
  const Limits l;
  auto want = [&](bool ok, const std::string& what) {
    if (!ok) out->push_back("model: " + what);
  };
  const std::string current = x.Str("/domain/vcpu/@current");
  const uint64_t vcpus = current.empty() ? Num(x.Str("/domain/vcpu")) : Num(current);
  want(vcpus == m.vcpus, "the XML has " + std::to_string(vcpus) + " vCPUs plugged, the model " + std::to_string(m.vcpus));
  want(Num(x.Str("/domain/vcpu")) == l.max_vcpus, "<vcpu> is " + x.Str("/domain/vcpu"));
  const uint64_t memory = Kib(x, "/domain/memory"), want_memory = uint64_t{MemoryMib(m)} * 1024;
  want(memory == want_memory, "<memory> is " + std::to_string(memory) + " KiB, the model's " + std::to_string(want_memory));
  want(x.Nodes("/domain/devices/disk[target/@dev='vdb']").size() == (m.disk ? 1u : 0u),
       std::string("vdb ") + (m.disk ? "missing" : "present"));
  want(x.Nodes("/domain/devices/interface[mac/@address='" + std::string(kNicMac) + "']").size() == (m.nic ? 1u : 0u),
       std::string("the NIC ") + (m.nic ? "missing" : "present"));
  want(x.Nodes("/domain/devices/memory[@model='dimm']").size() == (m.dimm ? 1u : 0u),
       std::string("the DIMM ") + (m.dimm ? "missing" : "present"));
  const std::string medium = x.Str("/domain/devices/disk[target/@dev='" + std::string(kCdromTarget) + "']/source/@file");
  const std::string want_medium = m.media == kEject ? "" : guest.Image(m.media).string();
  want(medium == want_medium, "the cdrom holds '" + medium + "', the model '" + want_medium + "'");
}

void QemuChecks(const LiveXml& x, const std::string& xml, const json& q, std::vector<std::string>* out) {
  auto want = [&](bool ok, const std::string& what) {
    if (!ok) out->push_back("qemu: " + what);
  };
  for (const char* c : {"query-hotpluggable-cpus", "query-memory-devices", "query-block", "query-pci"})
    if (!q.contains(c) || !q[c].is_array())
      out->push_back(std::string("qemu: ") + c + " answered " + q.value(c, json()).dump());
  if (!out->empty()) return;

  size_t plugged = 0;
  for (const json& c : q["query-hotpluggable-cpus"]) plugged += c.contains("qom-path");
  const std::string current = x.Str("/domain/vcpu/@current");
  const uint64_t vcpus = current.empty() ? Num(x.Str("/domain/vcpu")) : Num(current);
  want(plugged == vcpus, std::to_string(plugged) + " vCPUs plugged in QEMU, " + std::to_string(vcpus) + " in the XML");

  std::map<std::string, uint64_t> dimms;  // id -> size in KiB
  for (const json& d : q["query-memory-devices"])
    if (d.value("type", "") == "dimm") dimms[d["data"].value("id", "")] = d["data"].value("size", uint64_t{0}) / 1024;
  std::map<std::string, uint64_t> xml_dimms;
  for (xmlNodePtr n : x.Nodes("/domain/devices/memory[@model='dimm']"))
    xml_dimms[x.Str("alias/@name", n)] = Kib(x, "target/size", n);
  want(dimms == xml_dimms, "DIMMs in QEMU " + json(dimms).dump() + ", in the XML " + json(xml_dimms).dump());

  std::map<std::string, std::string> drives, xml_drives;  // id -> file ("" for none)
  for (const json& b : q["query-block"])
    if (!DriveId(b).empty()) drives[DriveId(b)] = b.contains("inserted") ? b["inserted"].value("file", "") : "";
  for (xmlNodePtr n : x.Nodes("/domain/devices/disk")) xml_drives[x.Str("alias/@name", n)] = x.Str("source/@file", n);
  want(drives == xml_drives, "drives in QEMU " + json(drives).dump() + ", in the XML " + json(xml_drives).dump());

  // Functions on the pc machine's one bus, "SS.F ID" (hex), for the devices that have an id.
  std::set<std::string> pci, xml_pci;
  char slot[16];
  for (const json& bus : q["query-pci"])
    for (const json& d : bus.value("devices", json::array()))
      if (!d.value("qdev_id", "").empty()) {
        std::snprintf(slot, sizeof slot, "%02x:%02x.%x", d.value("bus", 0), d.value("slot", 0), d.value("function", 0));
        pci.insert(std::string(slot) + " " + d.value("qdev_id", ""));
      }
  std::set<std::string> ids;
  for (const std::string& p : pci) ids.insert(p.substr(p.find(' ') + 1));
  try {
    for (const auto& [key, value] : launcher::PciAddressesOf(xml, "live.xml", /*with_alias=*/true)) {
      const std::string id = value.substr(value.find(' ') + 1);
      // The XML also places what the machine makes without an id (the PIIX3's IDE, USB): those
      // QEMU lists without one. Every id QEMU has, and every device the verbs plug, must match.
      if (ids.count(id) || id.rfind("virtio-disk", 0) == 0 || id.rfind("net", 0) == 0 || id == "balloon0")
        xml_pci.insert(value);
    }
  } catch (const std::exception& e) {
    out->push_back(std::string("qemu: the live XML's PCI addresses: ") + e.what());
    return;
  }
  want(pci == xml_pci, "PCI functions in QEMU " + json(pci).dump() + ", in the XML " + json(xml_pci).dump());
}

}  // namespace

std::vector<std::string> CompareLiveXml(const std::string& live_xml, const json& qemu, const ModelState& model,
                                        const SequenceGuest& guest) {
  const LiveXml x(live_xml);
  if (!x.ok()) return {"the live XML does not parse:\n" + live_xml};
  std::vector<std::string> out;
  ModelChecks(x, model, guest, &out);
  QemuChecks(x, live_xml, qemu, &out);
  return out;
}

std::string CompareBalloon(const std::string& live_xml, const json& query_balloon, const ModelState* model) {
  const LiveXml x(live_xml);
  const uint64_t current = Kib(x, "/domain/currentMemory");
  const uint64_t actual = query_balloon.value("actual", uint64_t{0}) / 1024;
  if (actual != current)
    return "balloon: QEMU's actual " + std::to_string(actual) + " KiB, <currentMemory> " + std::to_string(current) +
           " KiB (" + query_balloon.dump() + ")";
  if (model && current != uint64_t{model->balloon_mib} * 1024)
    return "model: <currentMemory> is " + std::to_string(current) + " KiB, the balloon's target " +
           std::to_string(model->balloon_mib) + " MiB";
  return "";
}

}  // namespace qlaunch::testing::seq
