// Test helpers for the host's default-size (2 MiB on x86) hugepage pool: read the counters and,
// as root, resize the pool for the length of a test (restored on destruction). Resizing goes
// through /proc/sys/vm/nr_hugepages; the kernel may take a while the first time it has to
// find contiguous memory, so tests keep their sizes small.
//
// The pool is one per host, and tests of several binaries (ctest -j, or other test runs on the
// same machine) would see each other's pages come and go. So a HugepagePool also holds an
// exclusive flock on kHugepageLockFile for its whole life: every test that sizes the pool or
// counts free pages through it runs alone with respect to the others that do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace qlaunch::testing {

// A field of /proc/meminfo ("HugePages_Free", "Hugepagesize" in kB, ...); nullopt if absent.
std::optional<uint64_t> MeminfoValue(const std::string& key);
uint64_t HugepagesFree();
uint64_t HugepagesTotal();
uint64_t DefaultHugepageBytes();  // Hugepagesize
// The pool of one page size (/sys/kernel/mm/hugepages/hugepages-<kB>kB); 0 when it has none.
uint64_t HugepagesFree(uint64_t page_bytes);
uint64_t HugepagesTotal(uint64_t page_bytes);

inline constexpr const char* kHugepageLockFile = "/tmp/qlaunch-hugepages.lock";

class HugepagePool {
 public:
  // Makes the pool hold at least `free_pages` free pages (AtLeast) or exactly that many
  // (Exactly), keeping every page in use where it is. ok() tells whether the kernel complied;
  // error() says why not (not root, not enough memory, ...).
  // page_bytes: the pool of that page size (e.g. 1 GiB pages, allocated at runtime); 0: the
  // default size. The lock is the same for every size.
  static HugepagePool AtLeast(uint64_t free_pages, uint64_t page_bytes = 0);
  static HugepagePool Exactly(uint64_t free_pages, uint64_t page_bytes = 0);
  // Only the lock, for a test that counts free pages without resizing the pool (root or not;
  // nothing is written back). ok() is always true.
  static HugepagePool LockOnly();

  HugepagePool(HugepagePool&& o) noexcept;
  HugepagePool& operator=(HugepagePool&&) = delete;
  ~HugepagePool();  // writes back the nr_hugepages found at construction, then unlocks

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The kernel took the new size but found too few pages (fragmented or too little memory: what a
  // machine lacks), as opposed to an error of the test's (not root, a write refused).
  bool short_of_memory() const { return short_of_memory_; }

 private:
  HugepagePool() = default;
  void Lock();
  void Resize(uint64_t free_pages, bool exact);
  int lock_fd_ = -1;
  std::optional<uint64_t> original_total_;
  uint64_t page_bytes_ = 0;  // 0: the default size
  std::string error_;
  bool short_of_memory_ = false;
};

// Writes nr_hugepages (of the pool of page_bytes; 0: the default); false (with *error) when that fails.
bool SetNrHugepages(uint64_t pages, std::string* error, uint64_t page_bytes = 0);

}  // namespace qlaunch::testing
