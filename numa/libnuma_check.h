// Cross-checking a sysfs-read topology against libnuma. Used for the real /sys only: libnuma
// always describes the live host, never a fixture tree.
//
// libnuma.so.1 is opened here, when a check runs (dlopen), and not linked: linked, its
// constructor reads /proc/self/status and sysfs at the start of every qlaunch process, a tenth of
// the CPU time of a `qlaunch --version`, for the few commands that read the live host. The NUMA
// system calls qlaunch makes itself (prealloc/: mbind, move_pages) go through syscall(2).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/diagnostic.h"
#include "numa/host_topology.h"

namespace qlaunch::numa {

// What libnuma answers about the nodes and CPUs of a topology.
struct LibnumaView {
  std::string load_error;                               // libnuma.so.1 could not be loaded: why
  bool available = false;                               // numa_available() >= 0
  int max_node = -1;                                    // numa_max_node()
  std::map<std::pair<unsigned, unsigned>, int> distances;  // numa_distance(from, to); 0 = unknown
  std::map<unsigned, int> node_of_cpu;                  // numa_node_of_cpu(cpu); -1 = unknown
};

// Asks libnuma about every node of `topo` (all pairs) and every CPU of its nodes.
LibnumaView QueryLibnuma(const HostTopology& topo);

// One warning per disagreement: libnuma not loadable (nothing else is checked then), libnuma unavailable, a different highest node id, a distance
// differing from sysfs (only where sysfs gave distances), a CPU libnuma puts on another node.
std::vector<Diagnostic> CompareWithLibnuma(const HostTopology& topo, const LibnumaView& view);

}  // namespace qlaunch::numa
