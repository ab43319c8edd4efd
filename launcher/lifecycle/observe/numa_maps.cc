#include "launcher/lifecycle/observe/numa_maps.h"

#include <cstdlib>
#include <set>
#include <sstream>

namespace qlaunch::launcher {

std::vector<Mapping> ParseNumaMaps(const std::string& maps_text, const std::string& numa_maps_text) {
  std::vector<Mapping> out;
  std::map<uint64_t, size_t> by_start;
  std::istringstream maps(maps_text);
  for (std::string line; std::getline(maps, line);) {
    std::istringstream f(line);
    std::string range, perms, offset, dev, inode;
    if (!(f >> range >> perms >> offset >> dev >> inode)) continue;
    size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    Mapping m;
    m.start = std::strtoull(range.substr(0, dash).c_str(), nullptr, 16);
    m.size = std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16) - m.start;
    std::getline(f >> std::ws, m.path);
    by_start[m.start] = out.size();
    out.push_back(std::move(m));
  }
  std::istringstream numa(numa_maps_text);
  for (std::string line; std::getline(numa, line);) {
    std::istringstream f(line);
    std::string addr, policy;
    if (!(f >> addr >> policy)) continue;
    auto it = by_start.find(std::strtoull(addr.c_str(), nullptr, 16));
    if (it == by_start.end()) continue;
    Mapping& m = out[it->second];
    m.policy = policy;
    std::map<unsigned, uint64_t> pages;
    bool sized = false;
    for (std::string field; f >> field;) {
      if (field == "huge" && !sized) {
        m.page_bytes = 0;  // a hugetlb mapping: its page size is named only once a page is mapped
      } else if (field.rfind("kernelpagesize_kB=", 0) == 0) {
        sized = true;
        m.page_bytes = std::strtoull(field.c_str() + 18, nullptr, 10) * 1024;
      } else if (field.size() > 2 && field[0] == 'N' && std::isdigit(static_cast<unsigned char>(field[1]))) {
        size_t eq = field.find('=');
        if (eq != std::string::npos)
          pages[std::strtoul(field.c_str() + 1, nullptr, 10)] += std::strtoull(field.c_str() + eq + 1, nullptr, 10);
      }
    }
    for (auto [node, n] : pages) m.bytes_by_node[node] = n * m.page_bytes;
  }
  return out;
}

std::map<std::string, Mapping> MatchBackends(const std::vector<Mapping>& mappings, const std::vector<BackendRef>& backends) {
  std::map<std::string, Mapping> out;
  std::set<size_t> taken;
  auto names = [](const std::string& path, const std::string& id) {
    // Both are deleted files: the kernel appends " (deleted)" to their paths.
    return path.find("qemu_back_mem." + id + ".") != std::string::npos ||
           (path.find("memfd:qlaunch:") != std::string::npos && path.find(":" + id + " ") != std::string::npos);
  };
  for (const BackendRef& b : backends)  // by name first
    for (size_t i = 0; i < mappings.size(); ++i)
      if (!taken.count(i) && names(mappings[i].path, b.id)) {
        out[b.id] = mappings[i];
        taken.insert(i);
        break;
      }
  auto fits = [](const Mapping& m, const BackendRef& b) {
    const uint64_t page = b.page_bytes ? b.page_bytes : 4096;
    // A hugetlb mapping with no page mapped yet (a warm pool file the guest has not touched) says
    // no page size: any huge page size fits it.
    if (m.size != b.size_bytes || (m.page_bytes ? m.page_bytes != page : page <= 4096)) return false;
    const size_t colon = m.policy.find(':');
    const std::string nodes = colon == std::string::npos ? "" : m.policy.substr(colon + 1);
    return nodes == b.nodes;
  };
  for (const BackendRef& b : backends) {  // then by size, page size and policy
    if (out.count(b.id)) continue;
    for (size_t i = 0; i < mappings.size(); ++i)
      if (!taken.count(i) && fits(mappings[i], b)) {
        out[b.id] = mappings[i];
        taken.insert(i);
        break;
      }
  }
  return out;
}

}  // namespace qlaunch::launcher
