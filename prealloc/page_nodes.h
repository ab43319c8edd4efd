// Where the pages of a memory file sit, per host node, read from the file itself: the pages it
// holds, wherever they are mapped, not only those some process has touched. `dominfo` uses it
// on the guest memory QEMU maps (a memfd qlaunch filled, or one QEMU filled), opened through
// /proc/PID/map_files, because QEMU's numa_maps counts only the pages in QEMU's page tables: for
// memory qlaunch filled, what the guest has touched so far.
//
// The file is mapped read-only, shared, without reservation; its pages are entered into that
// view with MADV_POPULATE_READ and their nodes read with move_pages(2) (no target: it only
// reports). Only a file whose every page is present is read this way: a read fault on a hole of
// a shared hugetlb file would allocate a page (take one from the pool) to fill it, so a file
// with holes is refused, with the count of what it holds, and nothing is mapped.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace qlaunch::prealloc {

struct PageNodes {
  bool complete = false;            // every page of [0, size) present; else nothing was read
  uint64_t present_bytes = 0;       // what the file holds (its blocks), whole or not
  std::map<unsigned, uint64_t> bytes_by_node;  // when complete: sums to size
};

// The placement of [0, size_bytes) of the file open on fd, in pages of page_bytes (the file's
// page size: a hugetlb size or the base page). Throws PreallocError when the file is shorter
// than size_bytes, or mapping or move_pages fails.
PageNodes ReadPageNodes(int fd, uint64_t size_bytes, uint64_t page_bytes);

}  // namespace qlaunch::prealloc
