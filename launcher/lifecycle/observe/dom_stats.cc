#include "launcher/lifecycle/observe/dom_stats.h"

#include <cstdint>
#include <stdexcept>
#include <tuple>

#include "domain/xml_doc.h"
#include "domain/xml_node.h"
#include "launcher/lifecycle/observe/device_lists.h"

namespace qlaunch::launcher {

using nlohmann::json;

namespace {

using domain::ElementChildren;
using domain::NodeAttr;

// libvirt's virDomainState and, for a paused domain, QEMU's run state as
// qemuMonitorVMStatusToPausedReason maps it to a virDomainPausedReason.
std::pair<unsigned, unsigned> StateAndReason(const std::string& status) {
  if (status == "running") return {1, 1};    // VIR_DOMAIN_RUNNING, _BOOTED
  if (status == "suspended") return {7, 0};  // VIR_DOMAIN_PMSUSPENDED, _UNKNOWN
  unsigned reason = 0;                       // VIR_DOMAIN_PAUSED_UNKNOWN: debug, internal-error, restore-vm, colo
  if (status == "paused" || status == "prelaunch") reason = 1;  // _USER
  if (status == "inmigrate" || status == "postmigrate" || status == "finish-migrate") reason = 2;  // _MIGRATION
  if (status == "save-vm") reason = 3;                                                            // _SAVE
  if (status == "io-error") reason = 5;                                                           // _IOERROR
  if (status == "watchdog") reason = 6;                                                           // _WATCHDOG
  if (status == "shutdown") reason = 8;                                                           // _SHUTTING_DOWN
  if (status == "guest-panicked") reason = 10;                                                    // _CRASHED
  return {3, reason};                                                                             // VIR_DOMAIN_PAUSED
}

const json& Member(const json& reply, const char* key, const char* command) {
  if (!reply.is_object() || !reply.contains(key))
    throw std::runtime_error(std::string(command) + " reply has no \"" + key + "\": " + reply.dump());
  return reply.at(key);
}

uint64_t Number(const json& obj, const char* key, const char* command) {
  const json& v = Member(obj, key, command);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    throw std::runtime_error(std::string(command) + " reply: \"" + key + "\" is not a count: " + v.dump());
  return v.get<uint64_t>();
}

// Does QEMU's qdev (the device id, or the QOM path of a device's backend, as
// "/machine/peripheral/virtio-disk0/virtio-backend") name the device with this alias?
bool QdevIs(const json& entry, const std::string& alias) {
  const std::string qdev = entry.value("qdev", "");
  const std::string path = "/machine/peripheral/" + alias;
  return !alias.empty() && (qdev == alias || qdev == path || qdev.rfind(path + "/", 0) == 0);
}

const json* EntryOf(const json& list, const std::string& alias) {
  if (!list.is_array()) return nullptr;
  for (const json& e : list)
    if (QdevIs(e, alias)) return &e;
  return nullptr;
}

// The guest's statistics as libvirt's qemuMonitorJSONGetMemoryStats collects them, in its order
// (KiB where QEMU gives bytes); QEMU reports -1 (as 2^64-1) for what the guest has not sent.
void AddGuestMemoryStats(const DomStatsInput& in, std::vector<StatField>& out) {
  const json& g = in.guest_stats;
  const json stats = g.is_object() && g.contains("stats") ? g["stats"] : json::object();
  auto add = [&](const json& obj, const char* qemu, const char* name, uint64_t divisor) {
    if (!obj.contains(qemu) || !obj[qemu].is_number()) return;
    if (obj[qemu].is_number_integer() && obj[qemu].get<int64_t>() < 0) return;
    const uint64_t v = obj[qemu].get<uint64_t>();
    if (v == UINT64_MAX) return;
    out.push_back({std::string("balloon.") + name, v / divisor});
  };
  if (g.is_object()) {
    for (const auto& [qemu, name, divisor] :
         {std::tuple{"stat-swap-in", "swap_in", 1024}, {"stat-swap-out", "swap_out", 1024},
          {"stat-major-faults", "major_fault", 1}, {"stat-minor-faults", "minor_fault", 1},
          {"stat-free-memory", "unused", 1024}, {"stat-total-memory", "available", 1024},
          {"stat-available-memory", "usable", 1024}})
      add(stats, qemu, name, divisor);
    add(g, "last-update", "last-update", 1);
    for (const auto& [qemu, name, divisor] :
         {std::tuple{"stat-disk-caches", "disk_caches", 1024}, {"stat-htlb-pgalloc", "hugetlb_pgalloc", 1},
          {"stat-htlb-pgfail", "hugetlb_pgfail", 1}})
      add(stats, qemu, name, divisor);
  }
  if (in.rss_kib) out.push_back({"balloon.rss", *in.rss_kib});
}

// libvirt's index of the disk's image in its backing chain: N of the node "libvirt-N-format".
std::optional<uint64_t> BackingIndex(const json& block_entry) {
  if (!block_entry.contains("inserted")) return std::nullopt;
  const std::string node = block_entry["inserted"].value("node-name", "");
  const std::string pre = "libvirt-", post = "-format";
  if (node.size() <= pre.size() + post.size() || node.rfind(pre, 0) != 0 ||
      node.compare(node.size() - post.size(), post.size(), post) != 0)
    return std::nullopt;
  const std::string n = node.substr(pre.size(), node.size() - pre.size() - post.size());
  if (n.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(n);
}

void AddVcpus(const DomStatsInput& in, std::vector<StatField>& out) {
  out.push_back({"vcpu.current", in.vcpus_current});
  out.push_back({"vcpu.maximum", in.vcpus_max});
  if (!in.cpus.is_array()) throw std::runtime_error("query-cpus-fast reply is not a list: " + in.cpus.dump());
  for (const json& c : in.cpus) {
    const std::string n = std::to_string(Number(c, "cpu-index", "query-cpus-fast"));
    const auto t = in.vcpu_times.find(static_cast<long>(Number(c, "thread-id", "query-cpus-fast")));
    out.push_back({"vcpu." + n + ".state", 1});  // VIR_VCPU_RUNNING: every vCPU QEMU lists is online
    if (t == in.vcpu_times.end()) continue;
    out.push_back({"vcpu." + n + ".time", t->second.time});
    out.push_back({"vcpu." + n + ".wait", t->second.wait});
    out.push_back({"vcpu." + n + ".delay", t->second.delay});
  }
}

void AddNets(const DomStatsInput& in, std::vector<StatField>& out) {
  out.push_back({"net.count", in.nics.size()});
  for (size_t i = 0; i < in.nics.size(); ++i) {
    const StatsNic& n = in.nics[i];
    if (n.tap.empty()) continue;  // libvirt: no ifname, no fields
    const std::string p = "net." + std::to_string(i) + ".";
    out.push_back({p + "name", n.tap});
    if (!n.counters) continue;
    const TapCounters& c = *n.counters;  // swapped: what the tap sends, the guest receives
    for (const auto& [k, v] : {std::pair{"rx.bytes", c.tx_bytes}, {"rx.pkts", c.tx_packets}, {"rx.errs", c.tx_errors},
                               {"rx.drop", c.tx_dropped}, {"tx.bytes", c.rx_bytes}, {"tx.pkts", c.rx_packets},
                               {"tx.errs", c.rx_errors}, {"tx.drop", c.rx_dropped}})
      out.push_back({p + k, v});
  }
}

void AddBlocks(const DomStatsInput& in, std::vector<StatField>& out) {
  out.push_back({"block.count", in.disks.size()});
  for (size_t i = 0; i < in.disks.size(); ++i) {
    const StatsDisk& d = in.disks[i];
    const std::string p = "block." + std::to_string(i) + ".";
    out.push_back({p + "name", d.target});
    if (!d.source.empty()) out.push_back({p + "path", d.source});
    const json* b = EntryOf(in.block, d.alias);
    if (b)
      if (auto index = BackingIndex(*b)) out.push_back({p + "backingIndex", *index});
    const json* st = EntryOf(in.blockstats, d.alias);
    if (st) {
      const json& s = Member(*st, "stats", "query-blockstats");
      for (const auto& [k, q] : {std::pair{"rd.reqs", "rd_operations"}, {"rd.bytes", "rd_bytes"},
                                 {"rd.times", "rd_total_time_ns"}, {"wr.reqs", "wr_operations"},
                                 {"wr.bytes", "wr_bytes"}, {"wr.times", "wr_total_time_ns"},
                                 {"fl.reqs", "flush_operations"}, {"fl.times", "flush_total_time_ns"}})
        out.push_back({p + k, Number(s, q, "query-blockstats")});
      // The storage node's highest write, as libvirt takes it (the parent of the format node).
      const json& parent = st->contains("parent") ? st->at("parent") : json();
      if (parent.is_object() && parent.contains("stats") && parent["stats"].contains("wr_highest_offset"))
        out.push_back({p + "allocation", Number(parent["stats"], "wr_highest_offset", "query-blockstats")});
    }
    if (b && b->contains("inserted") && b->at("inserted").contains("image")) {
      const json& image = b->at("inserted").at("image");
      const uint64_t capacity = Number(image, "virtual-size", "query-block");
      out.push_back({p + "capacity", capacity});
      // Without actual-size the image is not thin (libvirt: physical = capacity).
      out.push_back({p + "physical", image.contains("actual-size") ? Number(image, "actual-size", "query-block")
                                                                    : capacity});
    }
  }
}

std::string AttrOfChild(const xmlNode* node, const char* child, const char* attr) {
  for (const xmlNode* c : ElementChildren(node, child))
    if (auto v = NodeAttr(c, attr)) return *v;
  return "";
}

}  // namespace

std::vector<StatField> DomStats(const DomStatsInput& in) {
  std::vector<StatField> out;
  const auto [state, reason] = StateAndReason(Member(in.status, "status", "query-status").get<std::string>());
  out.push_back({"state.state", state});
  out.push_back({"state.reason", reason});
  // balloon.current: what the balloon says (libvirt's cur_balloon); without one, all the memory.
  out.push_back({"balloon.current",
                 in.balloon.is_null() ? in.memory_kib : Number(in.balloon, "actual", "query-balloon") / 1024});
  out.push_back({"balloon.maximum", in.memory_kib});
  AddGuestMemoryStats(in, out);
  AddVcpus(in, out);
  AddNets(in, out);
  AddBlocks(in, out);
  return out;
}

std::vector<StatsDisk> StatsDisks(const std::string& live_xml, const std::string& file) {
  const domain::XmlDoc doc = domain::XmlDoc::Parse(live_xml, file);
  std::vector<StatsDisk> out;
  for (const xmlNode* d : DevicesNamed(doc, "disk")) {
    std::string source;
    for (const xmlNode* s : ElementChildren(d, "source"))
      for (const char* attr : {"file", "dev"})
        if (auto v = NodeAttr(s, attr); v && source.empty()) source = *v;
    out.push_back({AttrOfChild(d, "target", "dev"), source, AttrOfChild(d, "alias", "name")});
  }
  return out;
}

std::string StatsBalloonAlias(const std::string& live_xml, const std::string& file) {
  const domain::XmlDoc doc = domain::XmlDoc::Parse(live_xml, file);
  for (const xmlNode* b : DevicesNamed(doc, "memballoon"))
    if (NodeAttr(b, "model").value_or("") != "none") return AttrOfChild(b, "alias", "name");
  return "";
}

std::vector<std::string> StatsTaps(const std::string& live_xml, const std::string& file) {
  const domain::XmlDoc doc = domain::XmlDoc::Parse(live_xml, file);
  std::vector<std::string> out;
  for (const xmlNode* n : DevicesNamed(doc, "interface")) out.push_back(AttrOfChild(n, "target", "dev"));
  return out;
}

std::string DomStatsText(const std::string& name, const std::vector<StatField>& fields) {
  std::string out = "Domain: '" + name + "'\n";
  for (const auto& [k, v] : fields) out += "  " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()) + "\n";
  return out + "\n";
}

json DomStatsJson(const std::vector<StatField>& fields) {
  json out = json::object();
  for (const auto& [k, v] : fields) out[k] = v;
  return out;
}

}  // namespace qlaunch::launcher
