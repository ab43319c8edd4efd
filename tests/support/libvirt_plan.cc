#include "support/libvirt_plan.h"

#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "common/id_set.h"
#include "domain/memory_totals.h"
#include "domain/parser.h"
#include "domain/validate.h"
#include "qemu_cmd/caps.h"
#include "support/libvirt_corpus.h"
#include "support/qemu_opts_split.h"
#include "support/build_paths.h"

namespace qlaunch::testing {

namespace {

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

qemu::QemuCaps Caps72() {
  std::ifstream in(std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/caps/qemu-7.2.json");
  return nlohmann::json::parse(in).get<qemu::QemuCaps>();
}

// "key=value" items of a comma-separated option as QEMU reads them, the implied first item apart.
std::vector<std::pair<std::string, std::string>> Items(const std::string& value, std::string* head) {
  std::vector<std::pair<std::string, std::string>> out = QemuOptsPairs(value);
  if (!out.empty() && out.front().first.empty()) {
    if (head) *head = out.front().second;
    out.erase(out.begin());
  }
  return out;
}

bool IsNumber(const std::string& v) { return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

qemu::LaunchPlan PlanLibvirtCase(const std::string& name) {
  domain::DomainDef def = domain::ParseDomainFile(LibvirtCaseOf(name).xml.string());
  auto problems = domain::ValidateDomain(def);
  const std::string errors = HasErrors(problems) ? DiagnosticError(problems).what() : "";
  const bool memory_fixup = LibvirtMemoryMismatchCases().contains(name);
  const bool topology_fixup = LibvirtTopologyMismatchCases().contains(name);
  if (memory_fixup) {
    EXPECT_NE(errors.find("but the NUMA cells add up to"), std::string::npos) << name << ": the <memory> mismatch must be refused";
    def.memory_bytes = domain::TotalMemoryBytes(def);  // what libvirt does silently
  }
  if (topology_fixup) {
    EXPECT_NE(errors.find("CPU topology doesn't match maximum vcpu count"), std::string::npos) << name << ": " << errors;
    domain::CpuTopology& t = def.cpu.topology.value();
    t.cores = def.vcpu.count / (t.sockets * t.dies * t.clusters * t.threads);
  }
  if (memory_fixup || topology_fixup) problems = domain::ValidateDomain(def);
  if (HasErrors(problems)) throw DiagnosticError(problems);
  qemu::PlanOptions opts;
  opts.qmp_socket = "/run/qlaunch/" + def.name + "/qmp.sock";
  opts.prealloc = qemu::PreallocMode::kQemu;
  static const qemu::QemuCaps caps = Caps72();
  return qemu::PlanLaunch(def, LibvirtHost(), caps, opts);
}

uint64_t PageSizeOfPath(const std::string& path) {
  if (path.starts_with("/dev/hugepages2M")) return 2 * kMiB;
  if (path.starts_with("/dev/hugepages1G")) return kGiB;
  return 0;
}

uint64_t BackendPageSize(const nlohmann::json& obj) {
  if (obj.value("qom-type", "") == "memory-backend-memfd") return obj.value("hugetlbsize", uint64_t{0});
  return PageSizeOfPath(obj.value("mem-path", ""));
}

std::vector<unsigned> NodesOf(const nlohmann::json& obj, const char* key) {
  return obj.contains(key) ? obj[key].get<std::vector<unsigned>>() : std::vector<unsigned>{};
}

nlohmann::json LegacyObjectToJson(const std::string& value) {
  std::string type;
  nlohmann::json j;
  IdSet host_nodes;
  bool any_nodes = false;
  auto items = Items(value, &type);
  j["qom-type"] = type;
  for (const auto& [key, v] : items) {
    if (key == "host-nodes") {
      host_nodes = host_nodes.Union(IdSet::Parse(v).value());
      any_nodes = true;
    } else if (v == "on" || v == "off") {
      j[key] = v == "on";
    } else if (IsNumber(v)) {
      j[key] = std::stoull(v);
    } else {
      j[key] = v;
    }
  }
  if (any_nodes) j["host-nodes"] = host_nodes.Ids();
  return j;
}

NumaNodeOption ParseNumaNode(const std::string& value) {
  NumaNodeOption n;
  std::string head;
  for (const auto& [key, v] : Items(value, &head)) {
    if (key == "nodeid") n.nodeid = std::stoul(v);
    if (key == "cpus") n.cpus.push_back(v);
    if (key == "memdev") n.memdev = v;
    if (key == "mem") n.mem_mib = std::stoull(v);
  }
  return n;
}

MemoryOption ParseMemoryOption(const std::string& value) {
  MemoryOption m;
  if (IsNumber(value)) {
    m.size_kib = std::stoull(value) * 1024;  // a bare number is MiB
    return m;
  }
  // libvirt writes KiB ("219136k"); QEMU reads a number without a suffix as MiB.
  auto kib = [](const std::string& v) { return v.ends_with("k") ? std::stoull(v.substr(0, v.size() - 1)) : std::stoull(v) * 1024; };
  for (const auto& [key, v] : Items(value, nullptr)) {
    if (key == "size") m.size_kib = kib(v);
    if (key == "slots") m.slots = std::stoul(v);
    if (key == "maxmem") m.maxmem_kib = kib(v);
  }
  return m;
}

}  // namespace qlaunch::testing
