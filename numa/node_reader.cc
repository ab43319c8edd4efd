#include "numa/node_reader.h"

#include <charconv>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "numa/hugepage_sizes.h"
#include "numa/sysfs_files.h"

namespace qlaunch::numa {

namespace fs = std::filesystem;

namespace {

// "node12" -> 12, "cpu3" -> 3 (prefix given); std::nullopt otherwise.
std::optional<unsigned> NumberedName(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  name.remove_prefix(prefix.size());
  unsigned n = 0;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || ptr != name.data() + name.size()) return std::nullopt;
  return n;
}

IdSet NumberedEntries(const fs::path& dir, std::string_view prefix) {
  IdSet ids;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (auto n = NumberedName(it->path().filename().string(), prefix)) ids.Insert(*n);
  return ids;
}

std::map<unsigned, unsigned> ReadDistances(const fs::path& file, const IdSet& node_ids) {
  std::map<unsigned, unsigned> distances;
  auto text = ReadTextFile(file);
  if (!text) return distances;
  std::istringstream in(*text);
  std::vector<unsigned> values;
  for (std::string word; in >> word;) {
    unsigned v = 0;
    auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || ptr != word.data() + word.size())
      throw std::runtime_error(file.string() + ": not a distance: '" + word + "'");
    values.push_back(v);
  }
  if (values.size() != node_ids.Size())
    throw std::runtime_error(file.string() + ": " + std::to_string(values.size()) +
                             " distances for " + std::to_string(node_ids.Size()) + " online nodes (" +
                             node_ids.ToString() + ")");
  size_t i = 0;
  for (unsigned to : node_ids) distances[to] = values[i++];
  return distances;
}

std::map<uint64_t, HugePool> ReadPools(const fs::path& hugepages_dir) {
  std::map<uint64_t, HugePool> pools;
  std::error_code ec;
  for (fs::directory_iterator it(hugepages_dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto bytes = ParseHugepageDirName(it->path().filename().string());
    if (!bytes) continue;
    auto total = ReadNumberFile(it->path() / "nr_hugepages");
    auto free = ReadNumberFile(it->path() / "free_hugepages");
    if (total && free) pools[*bytes] = HugePool{*total, *free};
  }
  return pools;
}

}  // namespace

IdSet ReadNodeIds(const fs::path& node_dir) {
  if (auto online = ReadIdListFile(node_dir / "online")) return *online;
  return NumberedEntries(node_dir, "node");
}

std::optional<uint64_t> ParseNodeMemTotal(std::string_view meminfo) {
  std::istringstream in{std::string(meminfo)};
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string node, id, key, unit;
    uint64_t kib = 0;
    if (!(words >> node >> id >> key) || node != "Node" || key != "MemTotal:") continue;
    if (!(words >> kib >> unit) || unit != "kB" || kib > (UINT64_MAX >> 10)) return std::nullopt;
    return kib << 10;
  }
  return std::nullopt;
}

std::map<uint64_t, HugePool> ReadNodeHugepagePools(const fs::path& node_dir, unsigned id) {
  return ReadPools(node_dir / ("node" + std::to_string(id)) / "hugepages");
}

HostNode ReadNode(const fs::path& node_dir, unsigned id, const IdSet& node_ids) {
  const fs::path dir = node_dir / ("node" + std::to_string(id));
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error(dir.string() + ": node " + std::to_string(id) +
                             " is listed as online but has no directory");
  HostNode node;
  node.id = id;
  if (auto cpus = ReadIdListFile(dir / "cpulist"))
    node.cpus = *cpus;
  else
    node.cpus = NumberedEntries(dir, "cpu");
  if (auto meminfo = ReadTextFile(dir / "meminfo")) {
    auto bytes = ParseNodeMemTotal(*meminfo);
    if (!bytes)
      throw std::runtime_error((dir / "meminfo").string() + ": no 'Node " + std::to_string(id) +
                               " MemTotal: <n> kB' line");
    node.memory_bytes = *bytes;
  }
  node.distances = ReadDistances(dir / "distance", node_ids);
  node.hugepages = ReadNodeHugepagePools(node_dir, id);
  return node;
}

}  // namespace qlaunch::numa
