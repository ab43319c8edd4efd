// Reading devices/system/node/: which nodes exist and each node's CPUs, memory, distances and
// per-node huge page pools.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "common/id_set.h"
#include "numa/host_topology.h"

namespace qlaunch::numa {

// Node ids from <node_dir>/online, else from the names of the nodeN directories.
IdSet ReadNodeIds(const std::filesystem::path& node_dir);

// Reads <node_dir>/node<id>/. `node_ids` is the online node list: the order of the numbers in
// the distance file. Absent meminfo/distance/hugepages leave those fields unknown; a missing
// cpulist falls back to the node's cpuN entries. Throws std::runtime_error naming the file for
// a missing node directory or malformed content.
HostNode ReadNode(const std::filesystem::path& node_dir, unsigned id, const IdSet& node_ids);

// <node_dir>/node<id>/hugepages/: the node's pools by page size (those with both counts).
std::map<uint64_t, HugePool> ReadNodeHugepagePools(const std::filesystem::path& node_dir, unsigned id);

// "Node 1 MemTotal:  16316412 kB" in a node's meminfo, in bytes.
std::optional<uint64_t> ParseNodeMemTotal(std::string_view meminfo);

}  // namespace qlaunch::numa
