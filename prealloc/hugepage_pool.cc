#include "prealloc/hugepage_pool.h"

#include <fstream>
#include <string>

#include "common/byte_size.h"

namespace qlaunch::prealloc {

std::filesystem::path HugepagePoolDir(uint64_t page_bytes, std::optional<unsigned> node) {
  std::string leaf = "hugepages-" + std::to_string(page_bytes / 1024) + "kB";
  if (node)
    return std::filesystem::path("/sys/devices/system/node") / ("node" + std::to_string(*node)) /
           "hugepages" / leaf;
  return std::filesystem::path("/sys/kernel/mm/hugepages") / leaf;
}

std::optional<uint64_t> FreeHugepages(uint64_t page_bytes, std::optional<unsigned> node) {
  std::ifstream in(HugepagePoolDir(page_bytes, node) / "free_hugepages");
  uint64_t pages = 0;
  if (!(in >> pages)) return std::nullopt;
  return pages;
}

std::string PoolExhaustedMessage(const std::string& region, uint64_t page_bytes, const IdSet& nodes,
                                 uint64_t pages_needed, uint64_t pages_populated) {
  std::string where;
  if (!nodes.Empty()) where = (nodes.Size() > 1 ? " on nodes " : " on node ") + nodes.ToString();
  std::string msg = "memory '" + region + "': hugepage pool exhausted" + where + " for " +
                    FormatPageSize(page_bytes) + " pages (needed " + std::to_string(pages_needed) +
                    " pages, populated " + std::to_string(pages_populated);
  std::optional<uint64_t> free;
  if (nodes.Empty()) {
    free = FreeHugepages(page_bytes);
  } else {
    for (unsigned n : nodes) {
      std::optional<uint64_t> f = FreeHugepages(page_bytes, n);
      if (f) free = free.value_or(0) + *f;
    }
  }
  if (free) msg += "; " + std::to_string(*free) + " free" + (where.empty() ? " on the host" : where);
  return msg + ")";
}

}  // namespace qlaunch::prealloc
