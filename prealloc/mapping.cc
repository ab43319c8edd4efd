#include "prealloc/mapping.h"

#include <sys/mman.h>

#include <cerrno>
#include <utility>

#include "common/byte_size.h"
#include "prealloc/error.h"
#include "prealloc/hugepage_pool.h"
#include "prealloc/memfd.h"

namespace qlaunch::prealloc {

Mapping Mapping::Map(const Memfd& memfd, const MapOptions& opts) {
  int flags = MAP_SHARED | (opts.reserve ? 0 : MAP_NORESERVE);
  void* addr = mmap(nullptr, memfd.size(), PROT_READ | PROT_WRITE, flags, memfd.fd(), 0);
  if (addr == MAP_FAILED) {
    int err = errno;
    if (memfd.hugetlb() && err == ENOMEM)
      throw PreallocError(PoolExhaustedMessage(memfd.name(), memfd.page_bytes(), opts.host_nodes,
                                               memfd.size() / memfd.page_bytes(), 0));
    std::string what = "memory '" + memfd.name() + "'";
    throw PreallocError(ErrnoMessage(what + ": mmap of " + FormatBytes(memfd.size()), err));
  }
  // A child forked while this is mapped (QEMU, spawned while the workers fill it) gets the memfd,
  // never this mapping: without MADV_DONTFORK, fork copies the page tables of every page filled so
  // far (hugetlb mappings are not skipped as other shared ones are), holding our mmap lock, and
  // so the workers' page faults, all that time. Best effort: a kernel that refuses only forks slower.
  (void)madvise(addr, memfd.size(), MADV_DONTFORK);
  Mapping m;
  m.addr_ = static_cast<std::byte*>(addr);
  m.size_ = memfd.size();
  return m;
}

Mapping::Mapping(Mapping&& other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    reset();
    addr_ = std::exchange(other.addr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Mapping::~Mapping() { reset(); }

void Mapping::ApplyPolicy(const MemPolicy& policy, const std::string& what) {
  ApplyMemPolicy(addr_, size_, policy, what);
}

void Mapping::reset() {
  if (addr_) munmap(std::exchange(addr_, nullptr), std::exchange(size_, 0));
}

}  // namespace qlaunch::prealloc
