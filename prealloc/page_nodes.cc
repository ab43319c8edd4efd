#include "prealloc/page_nodes.h"

#include <numaif.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "prealloc/error.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace qlaunch::prealloc {

namespace {

// A read-only shared view, unmapped when it goes.
struct ReadView {
  void* addr = MAP_FAILED;
  size_t len = 0;
  ~ReadView() {
    if (addr != MAP_FAILED) ::munmap(addr, len);
  }
};

// Enters the present pages of the view into its page tables: MADV_POPULATE_READ, or where the
// kernel lacks it (before 5.14), a read of one byte per page.
void PopulateRead(std::byte* addr, size_t len, uint64_t page_bytes) {
  while (::madvise(addr, len, MADV_POPULATE_READ) != 0) {
    if (errno == EINTR) continue;
    if (errno != EINVAL) throw PreallocError(ErrnoMessage("madvise MADV_POPULATE_READ", errno));
    for (size_t off = 0; off < len; off += page_bytes) {
      [[maybe_unused]] volatile std::byte b = addr[off];
    }
    return;
  }
}

}  // namespace

PageNodes ReadPageNodes(int fd, uint64_t size_bytes, uint64_t page_bytes) {
  if (page_bytes == 0 || size_bytes % page_bytes != 0)
    throw PreallocError("page nodes: size " + std::to_string(size_bytes) + " is not a multiple of the page size " +
                        std::to_string(page_bytes));
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw PreallocError(ErrnoMessage("page nodes: fstat", errno));
  if (static_cast<uint64_t>(st.st_size) < size_bytes)
    throw PreallocError("page nodes: the file holds " + std::to_string(st.st_size) + " bytes, fewer than the " +
                        std::to_string(size_bytes) + " asked for");
  PageNodes out;
  // st_blocks counts 512-byte units of what the file holds (hugetlbfs counts each huge page).
  out.present_bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  if (out.present_bytes < size_bytes) return out;  // holes: a read fault would fill one

  ReadView view;
  view.len = size_bytes;
  view.addr = ::mmap(nullptr, size_bytes, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (view.addr == MAP_FAILED) throw PreallocError(ErrnoMessage("page nodes: mmap", errno));
  auto* base = static_cast<std::byte*>(view.addr);
  PopulateRead(base, size_bytes, page_bytes);

  const uint64_t pages = size_bytes / page_bytes;
  constexpr uint64_t kBatch = 4096;
  std::vector<void*> addrs;
  std::vector<int> status;
  for (uint64_t first = 0; first < pages; first += kBatch) {
    const uint64_t n = std::min(kBatch, pages - first);
    addrs.resize(n);
    status.assign(n, 0);
    for (uint64_t i = 0; i < n; ++i) addrs[i] = base + (first + i) * page_bytes;
    // The system call, not libnuma's wrapper of it (see mem_policy.cc).
    if (::syscall(SYS_move_pages, 0, n, addrs.data(), nullptr, status.data(), 0) != 0)
      throw PreallocError(ErrnoMessage("page nodes: move_pages", errno));
    for (uint64_t i = 0; i < n; ++i) {
      if (status[i] < 0)
        throw PreallocError(ErrnoMessage("page nodes: the page at offset " +
                                             std::to_string((first + i) * page_bytes) + " has no node",
                                         -status[i]));
      out.bytes_by_node[static_cast<unsigned>(status[i])] += page_bytes;
    }
  }
  out.complete = true;
  return out;
}

}  // namespace qlaunch::prealloc
