// Where a QEMU process's guest memory sits, per host node, read from /proc/PID/maps and
// /proc/PID/numa_maps (for `dominfo`). numa_maps counts the pages mapped in QEMU's page tables:
// all of them once QEMU preallocated (it touched them); for memory qlaunch's own preallocator
// filled (shared memfds), only what the guest has touched so far; `dominfo` reads those files'
// own pages instead where it can (prealloc/page_nodes.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qlaunch::launcher {

struct Mapping {
  uint64_t start = 0, size = 0;
  std::string path;                          // "" for anonymous memory
  uint64_t page_bytes = 4096;                // kernelpagesize_kB; 0: hugetlb, no page mapped yet
  std::string policy;                        // "default", "bind:0", "interleave:0-1", ...
  std::map<unsigned, uint64_t> bytes_by_node;  // N<node>=<pages> x page size
};

// The mappings of maps_text (/proc/PID/maps) with their placement from numa_maps_text.
std::vector<Mapping> ParseNumaMaps(const std::string& maps_text, const std::string& numa_maps_text);

struct BackendRef {
  std::string id;  // "ram-node0", "pc.ram", "memdimm0"
  uint64_t size_bytes = 0;
  uint64_t page_bytes = 0;  // 0: ordinary pages
  std::string nodes;        // its host-nodes ("0", "0-1"); "" when unbound
};

// Each backend's mapping: the one whose file names it (QEMU's hugetlbfs files
// "qemu_back_mem.<id>.XXXXXX", qlaunch's memfds "memfd:qlaunch:<domain>:<id>"), else the first
// one not taken yet of exactly its size and page size whose memory policy names its host nodes
// (QEMU's own memfds all share one name). Backends without one are absent.
std::map<std::string, Mapping> MatchBackends(const std::vector<Mapping>& mappings, const std::vector<BackendRef>& backends);

}  // namespace qlaunch::launcher
