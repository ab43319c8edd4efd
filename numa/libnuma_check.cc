#include "numa/libnuma_check.h"

#include <dlfcn.h>
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

// The four functions the check asks, from libnuma.so.1, opened once per process (and kept).
struct Libnuma {
  decltype(&numa_available) available = nullptr;
  decltype(&numa_max_node) max_node = nullptr;
  decltype(&numa_distance) distance = nullptr;
  decltype(&numa_node_of_cpu) node_of_cpu = nullptr;
  std::string error;  // why it could not be loaded; "" when loaded
};

const Libnuma& LoadLibnuma() {
  static const Libnuma lib = [] {
    Libnuma l;
    void* handle = ::dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      l.error = why ? why : "dlopen failed";
      return l;
    }
    l.available = reinterpret_cast<decltype(l.available)>(::dlsym(handle, "numa_available"));
    l.max_node = reinterpret_cast<decltype(l.max_node)>(::dlsym(handle, "numa_max_node"));
    l.distance = reinterpret_cast<decltype(l.distance)>(::dlsym(handle, "numa_distance"));
    l.node_of_cpu = reinterpret_cast<decltype(l.node_of_cpu)>(::dlsym(handle, "numa_node_of_cpu"));
    if (!l.available || !l.max_node || !l.distance || !l.node_of_cpu) l.error = "libnuma.so.1 lacks a numa_* function";
    return l;
  }();
  return lib;
}

}  // namespace

LibnumaView QueryLibnuma(const HostTopology& topo) {
  LibnumaView view;
  const Libnuma& lib = LoadLibnuma();
  if (!lib.error.empty()) {
    view.load_error = lib.error;
    return view;
  }
  view.available = lib.available() >= 0;
  if (!view.available) return view;  // every other libnuma call is undefined then
  view.max_node = lib.max_node();
  for (const HostNode& from : topo.nodes) {
    for (const HostNode& to : topo.nodes)
      view.distances[{from.id, to.id}] = lib.distance(static_cast<int>(from.id), static_cast<int>(to.id));
    for (unsigned cpu : from.cpus) view.node_of_cpu[cpu] = lib.node_of_cpu(static_cast<int>(cpu));
  }
  return view;
}

std::vector<Diagnostic> CompareWithLibnuma(const HostTopology& topo, const LibnumaView& view) {
  std::vector<Diagnostic> out;
  if (topo.nodes.empty()) return out;
  if (!view.load_error.empty()) {
    out.push_back(Warning("not made: " + view.load_error + " (Debian's package libnuma1 has it)"));
    return out;
  }
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
