#include "launcher/host/pool_reserved.h"

#include <optional>
#include <stdexcept>
#include <string>

#include "numa/sysfs_files.h"

namespace qlaunch::launcher {

namespace {

// Read with open/read (numa/sysfs_files.h), not an ifstream: these are read under the pool lock.
std::optional<uint64_t> ReadCount(const std::filesystem::path& file) {
  try {
    return numa::ReadNumberFile(file);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

std::filesystem::path PoolDir(const std::filesystem::path& sysfs_root, uint64_t page_bytes) {
  return sysfs_root / "kernel/mm/hugepages" / ("hugepages-" + std::to_string(page_bytes / 1024) + "kB");
}

}  // namespace

std::map<uint64_t, uint64_t> ReadReservedHugepages(const std::filesystem::path& sysfs_root,
                                                   const std::vector<uint64_t>& sizes) {
  std::map<uint64_t, uint64_t> out;
  for (uint64_t page_bytes : sizes)
    out[page_bytes] = ReadCount(PoolDir(sysfs_root, page_bytes) / "resv_hugepages").value_or(0);
  return out;
}

std::map<uint64_t, uint64_t> ReadReservedHugepagesConsistently(numa::HostTopology* host) {
  std::map<uint64_t, uint64_t> out;
  for (uint64_t page_bytes : host->hugepage_sizes) {
    const std::filesystem::path dir = PoolDir(host->root, page_bytes);
    std::optional<uint64_t> free, resv;
    for (int tries = 0; tries < 100; ++tries) {
      free = ReadCount(dir / "free_hugepages");
      resv = ReadCount(dir / "resv_hugepages");
      if (!free || !resv || ReadCount(dir / "free_hugepages") == free) break;
    }
    out[page_bytes] = resv.value_or(0);
    if (!free || NodesWithPool(*host, page_bytes) != 1) continue;
    for (auto& node : host->nodes)  // the pool's one node: its free count is the size's, read with resv
      if (auto it = node.hugepages.find(page_bytes); it != node.hugepages.end() && it->second.total > 0)
        it->second.free = *free;
  }
  return out;
}

size_t NodesWithPool(const numa::HostTopology& host, uint64_t page_bytes) {
  size_t n = 0;
  for (const auto& node : host.nodes) {
    auto it = node.hugepages.find(page_bytes);
    n += it != node.hugepages.end() && it->second.total > 0;
  }
  return n;
}

bool ReservedCountIsExactPerNode(const std::vector<qemu::LaunchPlan::PoolNeed>& needs,
                                 const numa::HostTopology& host) {
  for (const auto& need : needs)
    if (need.pages > 0 && NodesWithPool(host, need.page_bytes) > 1) return false;
  return true;
}

}  // namespace qlaunch::launcher
