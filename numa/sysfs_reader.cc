// ReadHostTopology: assembles a HostTopology from a sysfs tree (the real /sys or a fixture).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <system_error>

#include "numa/cpu_affinity.h"
#include "numa/host_topology.h"
#include "numa/hugepage_sizes.h"
#include "numa/hugetlbfs_mounts.h"
#include "numa/libnuma_check.h"
#include "numa/node_reader.h"
#include "numa/sysfs_files.h"

namespace qlaunch::numa {

namespace fs = std::filesystem;

namespace {

// Host-wide sizes plus those of the per-node directories (even where a pool could not be read).
std::vector<uint64_t> AllHugepageSizes(const fs::path& root, const std::vector<HostNode>& nodes) {
  std::vector<uint64_t> sizes = HugepageSizesIn(root / "kernel/mm/hugepages");
  for (const HostNode& node : nodes) {
    auto dir = root / "devices/system/node" / ("node" + std::to_string(node.id)) / "hugepages";
    for (uint64_t bytes : HugepageSizesIn(dir)) sizes.push_back(bytes);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::optional<fs::path> MountsFile(const ReadOptions& opts, bool real_sysfs) {
  if (opts.mounts_file) return opts.mounts_file;
  if (real_sysfs) return fs::path("/proc/mounts");
  return opts.sysfs_root / "mounts";  // absent in most fixtures: then no mounts are known
}

}  // namespace

HostTopology ReadHostTopology(const ReadOptions& opts) {
  const fs::path& root = opts.sysfs_root;
  const bool real_sysfs = IsRealSysfs(root);
  const fs::path node_dir = root / "devices/system/node";
  std::error_code ec;
  if (!fs::is_directory(node_dir, ec))
    throw std::runtime_error(node_dir.string() + ": no NUMA node directory (is " + root.string() +
                             " a sysfs tree?)");

  HostTopology topo;
  topo.root = root;
  const IdSet node_ids = ReadNodeIds(node_dir);
  if (node_ids.Empty()) throw std::runtime_error(node_dir.string() + ": no NUMA nodes listed");
  for (unsigned id : node_ids) topo.nodes.push_back(ReadNode(node_dir, id, node_ids));

  topo.hugepage_sizes = AllHugepageSizes(root, topo.nodes);
  topo.default_hugepage_bytes = ReadDefaultHugepageBytes(root, real_sysfs, topo.hugepage_sizes);

  if (auto online = ReadIdListFile(root / "devices/system/cpu/online")) {
    topo.online_cpus = *online;
  } else {
    for (const HostNode& node : topo.nodes) topo.online_cpus = topo.online_cpus.Union(node.cpus);
  }
  topo.usable_cpus = opts.use_affinity.value_or(real_sysfs)
                         ? topo.online_cpus.Intersect(CurrentCpuAffinity())
                         : topo.online_cpus;

  if (auto file = MountsFile(opts, real_sysfs))
    if (auto text = ReadTextFile(*file))
      topo.hugetlbfs_mounts = ParseHugetlbfsMounts(*text, topo.default_hugepage_bytes);

  if (real_sysfs) topo.warnings = CompareWithLibnuma(topo, QueryLibnuma(topo));
  return topo;
}

void RereadHugepagePools(HostTopology* host) {
  const fs::path node_dir = host->root / "devices/system/node";
  for (HostNode& node : host->nodes) node.hugepages = ReadNodeHugepagePools(node_dir, node.id);
}

}  // namespace qlaunch::numa
