// Memfd: an anonymous memory file (memfd_create) of a fixed size, on ordinary or hugetlb
// pages, closed on destruction. Created with MFD_CLOEXEC: whoever hands it to a child dup2()s
// it onto the inherited fd number.
#pragma once

#include <cstdint>
#include <string>

namespace qlaunch::prealloc {

class Memfd {
 public:
  Memfd() = default;
  // page_bytes: 0 or the system page size for ordinary pages, else a hugetlb page size
  // (a power of two the kernel supports). size_bytes must be a positive multiple of it.
  // Throws PreallocError naming the page size ("no hugetlbfs support for 1 GiB pages ...").
  static Memfd Create(const std::string& name, uint64_t size_bytes, uint64_t page_bytes);
  // Takes ownership of `fd`, an open file of that size on hugetlbfs pages of page_bytes (a file of
  // the warm pool, launcher/host/warm_pool.h), so that it maps and populates as a memfd does.
  static Memfd Adopt(int fd, const std::string& name, uint64_t size_bytes, uint64_t page_bytes);

  Memfd(Memfd&& other) noexcept;
  Memfd& operator=(Memfd&& other) noexcept;
  Memfd(const Memfd&) = delete;
  Memfd& operator=(const Memfd&) = delete;
  ~Memfd();

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  uint64_t size() const { return size_; }
  uint64_t page_bytes() const { return page_bytes_; }  // the effective page size
  bool hugetlb() const { return hugetlb_; }
  const std::string& name() const { return name_; }
  // Gives up ownership: the caller closes the returned fd.
  int release();
  void reset();

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t page_bytes_ = 0;
  bool hugetlb_ = false;
  std::string name_;
};

// The system's base page size (sysconf(_SC_PAGESIZE)).
uint64_t BasePageBytes();

}  // namespace qlaunch::prealloc
