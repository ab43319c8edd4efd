#include "numa/host_json.h"

#include <string>

namespace qlaunch::numa {

using nlohmann::json;

namespace {

json NodeToJson(const HostNode& node) {
  json distances = json::object();
  for (auto [to, d] : node.distances) distances[std::to_string(to)] = d;
  json pools = json::object();
  for (const auto& [bytes, pool] : node.hugepages)
    pools[std::to_string(bytes)] = {{"total", pool.total}, {"free", pool.free}};
  return {{"id", node.id},
          {"cpus", node.cpus.Ids()},
          {"memory_bytes", node.memory_bytes},
          {"distances", std::move(distances)},
          {"hugepages", std::move(pools)}};
}

}  // namespace

json HostToJson(const HostTopology& topo) {
  json nodes = json::array();
  for (const HostNode& node : topo.nodes) nodes.push_back(NodeToJson(node));
  json mounts = json::object();
  for (const auto& [bytes, path] : topo.hugetlbfs_mounts) mounts[std::to_string(bytes)] = path;
  return {{"nodes", std::move(nodes)},
          {"usable_cpus", topo.usable_cpus.Ids()},
          {"hugepage_sizes", topo.hugepage_sizes},
          {"default_hugepage_bytes", topo.default_hugepage_bytes},
          {"hugetlbfs_mounts", std::move(mounts)}};
}

}  // namespace qlaunch::numa
