// Hugepage pool counters from sysfs, for error messages and tests. No caching.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/id_set.h"

namespace qlaunch::prealloc {

// free_hugepages of the pool of `page_bytes` pages: host-wide, or of one node when given.
// std::nullopt when the kernel has no such pool (or no such node).
std::optional<uint64_t> FreeHugepages(uint64_t page_bytes, std::optional<unsigned> node = {});

// The sysfs directory of that pool ("/sys/kernel/mm/hugepages/hugepages-2048kB" or
// "/sys/devices/system/node/node0/hugepages/hugepages-2048kB").
std::filesystem::path HugepagePoolDir(uint64_t page_bytes, std::optional<unsigned> node = {});

// "memory 'ram0': hugepage pool exhausted on node 0 for 2 MiB pages (needed 64 pages,
// populated 12; 0 free on node 0)". `nodes` empty: an unbound region (host-wide counts).
std::string PoolExhaustedMessage(const std::string& region, uint64_t page_bytes, const IdSet& nodes,
                                 uint64_t pages_needed, uint64_t pages_populated);

}  // namespace qlaunch::prealloc
