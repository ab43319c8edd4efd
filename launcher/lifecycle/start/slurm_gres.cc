#include "launcher/lifecycle/start/slurm_gres.h"

#include <fstream>
#include <set>
#include <utility>

namespace qlaunch::launcher {

std::string GresType(uint64_t page_bytes) {
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {{1ull << 40, "T"}, {1ull << 30, "G"}, {1ull << 20, "M"}, {1ull << 10, "K"}};
  for (auto [unit, suffix] : kUnits)
    if (page_bytes >= unit && page_bytes % unit == 0) return std::to_string(page_bytes / unit) + suffix;
  return std::to_string(page_bytes);
}

namespace {

bool ReadNumber(const std::filesystem::path& path, long* out) {
  std::ifstream in(path);
  return static_cast<bool>(in >> *out);
}

}  // namespace

IdSet LogicalCores(const numa::HostTopology& host, const IdSet& cpus) {
  // Every online CPU's (package, core); the sorted distinct pairs are Slurm's logical cores.
  std::map<unsigned, std::pair<long, long>> core_of;
  std::set<std::pair<long, long>> cores;
  for (unsigned cpu : host.online_cpus) {
    auto dir = host.root / "devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "topology";
    long package = 0, core = 0;
    if (!ReadNumber(dir / "physical_package_id", &package) || !ReadNumber(dir / "core_id", &core)) return {};
    core_of[cpu] = {package, core};
    cores.insert({package, core});
  }
  std::map<std::pair<long, long>, unsigned> index;
  for (const auto& c : cores) index.emplace(c, static_cast<unsigned>(index.size()));
  IdSet out;
  for (unsigned cpu : cpus) {
    auto it = core_of.find(cpu);
    if (it == core_of.end()) return {};
    out.Insert(index[it->second]);
  }
  return out;
}

GresConfig HostGresConfig(const numa::HostTopology& host, const std::string& node_name) {
  std::map<uint64_t, std::vector<std::pair<const numa::HostNode*, uint64_t>>> pools;  // size -> (node, pages)
  for (const auto& node : host.nodes)
    for (const auto& [size, pool] : node.hugepages)
      if (pool.total > 0) pools[size].push_back({&node, pool.total});
  GresConfig c;
  std::string gres;
  for (const auto& [size, nodes] : pools) {
    const std::string type = GresType(size);
    uint64_t total = 0;
    for (const auto& [node, pages] : nodes) total += pages;
    gres += (gres.empty() ? "" : ",") + std::string(kGresName) + ":" + type + ":" + std::to_string(total);
    const std::string head = "NodeName=" + node_name + " Name=" + kGresName + " Type=" + type;
    if (nodes.size() == 1) {
      c.gres_conf.push_back(head + " Count=" + std::to_string(total));
      continue;
    }
    for (const auto& [node, pages] : nodes) {
      std::string line = head + " Count=" + std::to_string(pages);
      IdSet cpus = node->HasCpus() ? node->cpus : host.CpusOfNodes(host.NearestCpuNodes(node->id));
      IdSet cores = LogicalCores(host, cpus);
      if (!cores.Empty()) line += " Cores=" + cores.ToString();
      c.gres_conf.push_back(line + "  # host node " + std::to_string(node->id));
    }
  }
  if (!gres.empty()) {
    c.gres_types = std::string("GresTypes=") + kGresName;
    c.node_gres = "NodeName=" + node_name + " Gres=" + gres;
  }
  return c;
}

std::string FormatGresConfig(const GresConfig& config, const std::string& node_name) {
  std::string out = "# Hugepages of " + node_name +
                    " as a Slurm GRES: the count is in pages of the type's size (qlaunch capabilities --format gres)\n"
                    "# slurm.conf (add Gres= to this node's NodeName line):\n" +
                    config.gres_types + "\n" + config.node_gres + "\n# gres.conf:\n";
  for (const auto& line : config.gres_conf) out += line + "\n";
  return out;
}

std::string GresArgument(const std::vector<qemu::LaunchPlan::PoolNeed>& needs) {
  std::map<uint64_t, uint64_t> per_size;
  for (const auto& n : needs)
    if (n.page_bytes > 0 && n.pages > 0) per_size[n.page_bytes] += n.pages;
  std::string out;
  for (const auto& [size, pages] : per_size)
    out += (out.empty() ? "" : ",") + std::string(kGresName) + ":" + GresType(size) + ":" + std::to_string(pages);
  return out;
}

}  // namespace qlaunch::launcher
