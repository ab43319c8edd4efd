// Faulting in one chunk of a shared mapping, the two ways the kernel allows: one
// MADV_POPULATE_WRITE call, or a write to one byte per page under a SIGBUS guard.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qlaunch::prealloc {

// madvise(MADV_POPULATE_WRITE) over [addr, addr+len), retried on EINTR. 0 or an errno
// (ENOMEM/EFAULT: no memory or no hugepage left for a page; EINVAL: not supported).
int MadvisePopulateWrite(std::byte* addr, size_t len);

// Writes 0 to the first byte of each page of [addr, addr+len) (addr and len page-aligned).
// Returns the bytes populated: len, or less when a page faulted with SIGBUS (pool exhausted).
// Only while a SigbusGuard is alive in the process.
size_t TouchPages(std::byte* addr, size_t len, size_t page_bytes);

// Installs the process-wide SIGBUS handler that TouchPages relies on (reference-counted;
// the previous handler comes back when the last guard goes). A SIGBUS outside TouchPages
// still gets the default action.
class SigbusGuard {
 public:
  SigbusGuard();
  ~SigbusGuard();
  SigbusGuard(const SigbusGuard&) = delete;
  SigbusGuard& operator=(const SigbusGuard&) = delete;
};

// Bytes of [addr, addr+len) whose pages are present (mincore), counted in page_bytes units.
uint64_t ResidentBytes(const std::byte* addr, size_t len, size_t page_bytes);

}  // namespace qlaunch::prealloc
