// HostTopology as JSON (for `qlaunch host` and for tests):
// {"nodes": [{"id", "cpus": [..], "memory_bytes", "distances": {"<id>": n},
//             "hugepages": {"<page bytes>": {"total", "free"}}}],
//  "usable_cpus": [..], "hugepage_sizes": [..], "default_hugepage_bytes": n,
//  "hugetlbfs_mounts": {"<page bytes>": "/path"}}
// Unknown values stay as read: memory_bytes 0, empty distances/hugepages objects.
#pragma once

#include <nlohmann/json.hpp>

#include "numa/host_topology.h"

namespace qlaunch::numa {

nlohmann::json HostToJson(const HostTopology& topo);

}  // namespace qlaunch::numa
