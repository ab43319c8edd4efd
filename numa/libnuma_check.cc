#include "numa/libnuma_check.h"

#include <numa.h>

#include <string>

namespace qlaunch::numa {

namespace {

Diagnostic Warning(std::string message) {
  Diagnostic d;
  d.severity = Severity::kWarning;
  d.message = "libnuma cross-check: " + std::move(message);
  return d;
}

}  // namespace

LibnumaView QueryLibnuma(const HostTopology& topo) {
  LibnumaView view;
  view.available = numa_available() >= 0;
  if (!view.available) return view;  // every other libnuma call is undefined then
  view.max_node = numa_max_node();
  for (const HostNode& from : topo.nodes) {
    for (const HostNode& to : topo.nodes)
      view.distances[{from.id, to.id}] = numa_distance(static_cast<int>(from.id), static_cast<int>(to.id));
    for (unsigned cpu : from.cpus) view.node_of_cpu[cpu] = numa_node_of_cpu(static_cast<int>(cpu));
  }
  return view;
}

std::vector<Diagnostic> CompareWithLibnuma(const HostTopology& topo, const LibnumaView& view) {
  std::vector<Diagnostic> out;
  if (topo.nodes.empty()) return out;
  if (!view.available) {
    out.push_back(Warning("numa_available() failed although " + topo.root.string() + " lists NUMA nodes " +
                          topo.NodeIds().ToString()));
    return out;
  }
  const unsigned sysfs_max = topo.nodes.back().id;
  if (view.max_node != static_cast<int>(sysfs_max))
    out.push_back(Warning("numa_max_node() is " + std::to_string(view.max_node) + ", sysfs's highest node is " +
                          std::to_string(sysfs_max)));
  for (const HostNode& from : topo.nodes) {
    for (auto [to, distance] : from.distances) {
      auto it = view.distances.find({from.id, to});
      int libnuma = it == view.distances.end() ? 0 : it->second;
      if (libnuma != static_cast<int>(distance))
        out.push_back(Warning("numa_distance(" + std::to_string(from.id) + ", " + std::to_string(to) + ") is " +
                              std::to_string(libnuma) + ", sysfs says " + std::to_string(distance)));
    }
    for (unsigned cpu : from.cpus) {
      auto it = view.node_of_cpu.find(cpu);
      int libnuma = it == view.node_of_cpu.end() ? -1 : it->second;
      if (libnuma != static_cast<int>(from.id))
        out.push_back(Warning("numa_node_of_cpu(" + std::to_string(cpu) + ") is " + std::to_string(libnuma) +
                              ", sysfs puts it on node " + std::to_string(from.id)));
    }
  }
  return out;
}

}  // namespace qlaunch::numa
