#include "prealloc/memfd.h"

#include <linux/memfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <utility>

#include "common/byte_size.h"
#include "prealloc/error.h"

namespace qlaunch::prealloc {

uint64_t BasePageBytes() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

Memfd Memfd::Create(const std::string& name, uint64_t size_bytes, uint64_t page_bytes) {
  if (page_bytes == 0) page_bytes = BasePageBytes();
  const bool hugetlb = page_bytes != BasePageBytes();
  const std::string what = "memory '" + name + "' (" + FormatBytes(size_bytes) + " of " +
                           FormatPageSize(page_bytes) + " pages)";
  if (!std::has_single_bit(page_bytes) || page_bytes < BasePageBytes())
    throw PreallocError(what + ": page size " + std::to_string(page_bytes) +
                        " is not a power of two of at least " + FormatPageSize(BasePageBytes()));
  if (size_bytes == 0 || size_bytes % page_bytes != 0)
    throw PreallocError(what + ": size " + std::to_string(size_bytes) +
                        " bytes is not a positive multiple of the " + FormatPageSize(page_bytes) +
                        " page size");

  unsigned flags = MFD_CLOEXEC;
  if (hugetlb) flags |= MFD_HUGETLB | (std::countr_zero(page_bytes) << MFD_HUGE_SHIFT);
  Memfd m;
  m.fd_ = memfd_create(name.c_str(), flags);
  if (m.fd_ < 0) {
    int err = errno;
    if (hugetlb && (err == EINVAL || err == ENODEV || err == ENOENT))
      throw PreallocError(ErrnoMessage(what + ": no hugetlbfs support for " +
                                           FormatPageSize(page_bytes) + " pages (memfd_create)",
                                       err));
    throw PreallocError(ErrnoMessage(what + ": memfd_create", err));
  }
  m.size_ = size_bytes;
  m.page_bytes_ = page_bytes;
  m.hugetlb_ = hugetlb;
  m.name_ = name;
  if (ftruncate(m.fd_, static_cast<off_t>(size_bytes)) != 0)
    throw PreallocError(ErrnoMessage(what + ": ftruncate", errno));
  return m;
}

Memfd Memfd::Adopt(int fd, const std::string& name, uint64_t size_bytes, uint64_t page_bytes) {
  Memfd m;
  m.fd_ = fd;
  m.size_ = size_bytes;
  m.page_bytes_ = page_bytes ? page_bytes : BasePageBytes();
  m.hugetlb_ = m.page_bytes_ != BasePageBytes();
  m.name_ = name;
  return m;
}

Memfd::Memfd(Memfd&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      page_bytes_(other.page_bytes_),
      hugetlb_(other.hugetlb_),
      name_(std::move(other.name_)) {}

Memfd& Memfd::operator=(Memfd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    page_bytes_ = other.page_bytes_;
    hugetlb_ = other.hugetlb_;
    name_ = std::move(other.name_);
  }
  return *this;
}

Memfd::~Memfd() { reset(); }

int Memfd::release() { return std::exchange(fd_, -1); }

void Memfd::reset() {
  if (fd_ >= 0) close(std::exchange(fd_, -1));
}

}  // namespace qlaunch::prealloc
