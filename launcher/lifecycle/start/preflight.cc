#include "launcher/lifecycle/start/preflight.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "common/byte_size.h"
#include "launcher/host/pool_reserved.h"
#include "qemu_cmd/kvm_device.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

uint64_t FreePages(const numa::HostNode* node, uint64_t page_bytes) {
  if (!node) return 0;
  auto it = node->hugepages.find(page_bytes);
  return it == node->hugepages.end() ? 0 : it->second.free;
}

std::string NrHugepagesPath(const numa::HostTopology& host, int node, uint64_t page_bytes) {
  std::string pool = "hugepages-" + std::to_string(page_bytes / 1024) + "kB/nr_hugepages";
  if (node < 0) return "/sys/kernel/mm/hugepages/" + pool;
  return "/sys/devices/system/node/node" + std::to_string(node) + "/hugepages/" + pool;
}

Diagnostic Shortfall(std::string where, uint64_t page_bytes, uint64_t needed, uint64_t available, uint64_t free,
                     uint64_t reserved, std::string hint) {
  Diagnostic d;
  std::string why;
  if (reserved > 0)
    why = std::to_string(free) + " free, " + std::to_string(reserved) +
          " of them reserved by mappings not filled yet, such as a start under way; ";
  d.message = "not enough " + FormatPageSize(page_bytes) + " hugepages " + where + ": the domain needs " +
              std::to_string(needed) + ", " + std::to_string(available) + (available == 1 ? " is" : " are") +
              " free (" + why + std::move(hint) + ")";
  return d;
}

// The line of the first "<domain" in the file, 0 when unknown.
int DomainElementLine(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("<domain") != std::string::npos) return n;
  return 0;
}

}  // namespace

std::vector<Diagnostic> CheckHugepagePools(const std::vector<qemu::LaunchPlan::PoolNeed>& needs,
                                           const numa::HostTopology& host,
                                           const std::map<uint64_t, uint64_t>& reserved) {
  std::map<std::pair<int, uint64_t>, uint64_t> per_pool;  // (node, page) -> pages
  std::map<uint64_t, uint64_t> per_size;                  // page -> pages, all nodes
  std::set<uint64_t> unbound_sizes, short_sizes;
  for (const auto& need : needs) {
    if (need.page_bytes == 0 || need.pages == 0) continue;
    per_pool[{need.node < 0 ? -1 : need.node, need.page_bytes}] += need.pages;
    per_size[need.page_bytes] += need.pages;
    if (need.node < 0) unbound_sizes.insert(need.page_bytes);
  }
  auto reserved_of = [&](uint64_t page_bytes) {
    auto it = reserved.find(page_bytes);
    return it == reserved.end() ? uint64_t{0} : it->second;
  };
  std::vector<Diagnostic> errors;
  for (const auto& [key, pages] : per_pool) {
    auto [node, page_bytes] = key;
    if (node < 0) continue;
    const numa::HostNode* host_node = host.Node(static_cast<unsigned>(node));
    uint64_t free = FreePages(host_node, page_bytes);
    // The kernel counts reservations per size only: exact for a node when the pool is all there.
    uint64_t resv = NodesWithPool(host, page_bytes) <= 1 ? std::min(reserved_of(page_bytes), free) : 0;
    uint64_t available = free - resv;
    if (pages <= available) continue;
    short_sizes.insert(page_bytes);
    std::string hint = "the host has no such node";
    if (host_node) {
      auto pool = host_node->hugepages.find(page_bytes);
      uint64_t total = pool == host_node->hugepages.end() ? 0 : pool->second.total;
      hint = "reserve more with: echo " + std::to_string(total + pages - available) + " > " +
             NrHugepagesPath(host, node, page_bytes);
    }
    errors.push_back(
        Shortfall("on host node " + std::to_string(node), page_bytes, pages, available, free, resv, hint));
  }
  for (const auto& [page_bytes, pages] : per_size) {
    // Node-bound needs that already fell short are reported once, above.
    if (!unbound_sizes.count(page_bytes) && short_sizes.count(page_bytes)) continue;
    uint64_t free = 0, total = 0;
    for (const auto& node : host.nodes) {
      free += FreePages(&node, page_bytes);
      auto it = node.hugepages.find(page_bytes);
      if (it != node.hugepages.end()) total += it->second.total;
    }
    uint64_t resv = std::min(reserved_of(page_bytes), free);
    uint64_t available = free - resv;
    if (pages <= available) continue;
    errors.push_back(Shortfall("on the host (all nodes)", page_bytes, pages, available, free, resv,
                               "reserve more with: echo " + std::to_string(total + pages - available) + " > " +
                                   NrHugepagesPath(host, -1, page_bytes)));
  }
  return errors;
}

std::vector<Diagnostic> CheckAccelerator(const domain::DomainDef& def, const fs::path& kvm_dev) {
  std::string why;
  if (def.type != "kvm" || qemu::KvmUsable(&why, kvm_dev)) return {};
  Diagnostic d;
  d.file = def.file;
  d.line = DomainElementLine(def.file);
  d.element = "domain";
  d.message = "type='kvm' needs KVM, which is not usable on this host (" + why +
              "); use <domain type='qemu'> to run the guest with TCG (emulation) instead";
  return {d};
}

std::vector<fs::path> MissingMemPathDirs(const qemu::LaunchPlan& plan, const std::vector<fs::path>& roots) {
  std::vector<fs::path> dirs;
  std::set<fs::path> seen;
  for (const auto& b : plan.backends) {
    if (b.type != qemu::BackendType::kFile || b.mem_path.empty() || b.launcher_fd >= 0) continue;
    fs::path path = fs::path(b.mem_path).lexically_normal();
    if (path.string().rfind("/proc/self/fd/", 0) == 0) continue;
    for (const auto& root_in : roots) {
      if (root_in.empty()) continue;
      fs::path root = root_in.lexically_normal();
      fs::path rel = path.lexically_relative(root);
      if (rel.empty() || *rel.begin() == "..") continue;
      fs::path cur = root;
      for (const auto& part : rel) {
        if (part == "." || part.empty()) continue;
        cur /= part;
        std::error_code ec;
        if (!fs::exists(cur, ec) && seen.insert(cur).second) dirs.push_back(cur);
      }
      break;
    }
  }
  return dirs;
}

}  // namespace qlaunch::launcher
