#include "launcher/lifecycle/observe/domain_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <set>
#include <vector>

#include "common/id_set.h"
#include "domain/parser.h"
#include "launcher/lifecycle/change/balloon.h"
#include "launcher/lifecycle/change/memory_resize.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/observe/domain_list.h"
#include "launcher/lifecycle/observe/numa_maps.h"
#include "launcher/host/process_identity.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "prealloc/error.h"
#include "prealloc/page_nodes.h"

namespace qlaunch::launcher {

using nlohmann::json;

namespace {

std::string Slurp(const std::filesystem::path& p) { return ReadSmallFile(p).value_or(""); }

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Where the pages of a file-backed guest memory mapping of QEMU sit (a memfd, a hugetlbfs file),
// read from the file itself through /proc/PID/map_files (root only): every page the backend
// holds, including those qlaunch filled and the guest has not touched yet. nullopt where the file
// cannot be opened (not root), has holes, or cannot be read: the caller keeps QEMU's numa_maps.
std::optional<std::map<unsigned, uint64_t>> BackingByNode(pid_t pid, const Mapping& m) {
  if (m.path.empty()) return std::nullopt;  // anonymous memory: numa_maps is the whole truth
  char name[64];
  std::snprintf(name, sizeof name, "%llx-%llx", static_cast<unsigned long long>(m.start),
                static_cast<unsigned long long>(m.start + m.size));
  const std::string path = "/proc/" + std::to_string(pid) + "/map_files/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::map<unsigned, uint64_t>> out;
  try {
    prealloc::PageNodes nodes = prealloc::ReadPageNodes(fd, m.size, m.page_bytes);
    if (nodes.complete) out = std::move(nodes.bytes_by_node);
  } catch (const prealloc::PreallocError&) {
  }
  ::close(fd);
  return out;
}

}  // namespace

json DomainInfo(const StateDir& state, const std::string& name) {
  const ProcessRef qemu = RunningQemu(state, name, Verb::kDominfo);
  const auto dir = state.DomainDir(name);
  // The running definition: <vcpu current> follows setvcpus.
  domain::DomainDef def = domain::ParseDomainFile(RunningXmlPath(dir).string());
  json plan = json::parse(Slurp(dir / "plan.json"), nullptr, false);
  json out = {{"name", name},
              {"uuid", def.uuid.empty() ? json(nullptr) : json(def.uuid)},
              {"state", ShownStatus(QueryStatus((dir / "qmp.sock").string(), std::chrono::seconds(5)))},
              {"pid", qemu.pid},
              {"user", Trimmed(Slurp(dir / "user"))},
              {"vcpus", def.vcpu.current.value_or(def.vcpu.count)},
              {"max_vcpus", def.vcpu.count},
              {"memory_bytes", def.memory_bytes},
              {"graphics", json::array()},
              {"interfaces", json::array()}};
  // Its ids and namespaces as the kernel has them (uid_lease.h: leased to it or named).
  const json identity = ProcessIdentity(qemu.pid);
  for (const auto& [key, value] : identity.items()) out[key] = value;
  // What the guest holds now: the balloon's actual (libvirt's "Used memory"); without a balloon,
  // all of it.
  out["used_memory_bytes"] =
      BalloonActual((dir / "qmp.sock").string(), std::chrono::seconds(5)).value_or(def.memory_bytes);
  // virtio-mem: what each device was asked to plug and what the guest has plugged.
  json virtio_mem = json::array();
  const std::map<std::string, VirtioMemStatus> vmem =
      def.devices.memory.empty() ? std::map<std::string, VirtioMemStatus>{}
                                 : VirtioMemNow((dir / "qmp.sock").string(), std::chrono::seconds(5));
  unsigned rank = 0;
  for (const domain::MemoryDevice& m : def.devices.memory) {
    if (m.model != "virtio-mem") continue;
    const std::string alias = "virtiomem" + std::to_string(rank++);
    const auto it = vmem.find(alias);
    virtio_mem.push_back({{"alias", alias},
                          {"node", m.node.value_or(0)},
                          {"size_bytes", it != vmem.end() ? it->second.max : m.size_bytes},
                          {"requested_bytes", it != vmem.end() ? it->second.requested : m.requested_bytes.value_or(0)},
                          {"plugged_bytes", it != vmem.end() ? json(it->second.plugged) : json(nullptr)}});
  }
  out["virtio_mem"] = std::move(virtio_mem);
  json devices = ReadDevicesJson(state, name);
  out["graphics"] = devices.value("graphics", json::array());
  out["interfaces"] = devices.value("interfaces", json::array());
  std::set<uint64_t> page_sizes;
  std::set<std::string> prealloc;
  std::vector<BackendRef> refs;
  json backends = json::array();
  json planned = json::object();
  for (const json& b : plan.value("backends", json::array())) {
    std::vector<unsigned> nodes = b.value("host_nodes", std::vector<unsigned>{});
    BackendRef r{b.value("id", ""), b.value("size_bytes", uint64_t{0}), b.value("page_size_bytes", uint64_t{0}),
                 nodes.empty() ? "" : IdSet(nodes).ToString()};
    refs.push_back(r);
    page_sizes.insert(r.page_bytes);
    prealloc.insert(b.value("prealloc", "none"));
    // Where the plan put it: on its host node, or spread over its nodes ("0-1"), or unbound ("any").
    std::string key = nodes.empty() ? "any" : std::to_string(nodes.front());
    if (nodes.size() > 1) key = IdSet(nodes).ToString();
    planned[key] = planned.value(key, uint64_t{0}) + r.size_bytes;
    backends.push_back({{"id", r.id}, {"size_bytes", r.size_bytes}, {"host_nodes", nodes},
                        {"policy", b.value("policy", "")}, {"page_size_bytes", b.value("page_size_bytes", uint64_t{0})},
                        {"prealloc", b.value("prealloc", "none")}});
  }
  const std::string proc = "/proc/" + std::to_string(qemu.pid);
  auto matched = MatchBackends(ParseNumaMaps(Slurp(proc + "/maps"), Slurp(proc + "/numa_maps")), refs);
  json by_node = json::object();
  for (json& b : backends) {
    json mine = json::object();
    std::string source = "none";
    if (auto it = matched.find(b["id"].get<std::string>()); it != matched.end()) {
      std::map<unsigned, uint64_t> placed = it->second.bytes_by_node;
      source = "qemu-mapped";
      Mapping mapped = it->second;  // an untouched hugetlb file's mapping names no page size: the plan's
      if (!mapped.page_bytes) mapped.page_bytes = b.value("page_size_bytes", uint64_t{0});
      if (auto backing = mapped.page_bytes ? BackingByNode(qemu.pid, mapped) : std::nullopt) {
        placed = std::move(*backing);
        source = "backing";
      }
      for (auto [node, bytes] : placed) {
        mine[std::to_string(node)] = bytes;
        by_node[std::to_string(node)] = by_node.value(std::to_string(node), uint64_t{0}) + bytes;
      }
    }
    b["memory_by_node"] = mine;
    // "backing": every page the backend's file holds; "qemu-mapped": the pages in QEMU's page
    // tables (numa_maps), which for memory qlaunch filled is only what the guest has touched.
    b["memory_source"] = source;
  }
  out["page_sizes"] = page_sizes;
  out["prealloc"] = prealloc.count("launcher") ? "launcher" : prealloc.count("qemu") ? "qemu" : "none";
  out["memory_by_node"] = by_node;
  out["planned_by_node"] = planned;
  out["backends"] = backends;
  return out;
}

}  // namespace qlaunch::launcher
