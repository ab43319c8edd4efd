// The host-wide hugepage pool lock. Two starts that each fit the free pool but not together
// would both pass the pre-flight, and the loser would fail inside QEMU ("unable to map backing
// store"). So a start whose plan takes hugepages holds this lock from re-reading the free pages
// (pre-flight) until its memory is reserved: hugetlb reserves pages when they are mapped, which
// qlaunch does for its memfds before the spawn and QEMU does for its backends before it greets
// on QMP. The loser then fails in the pre-flight with the pool error, before anything exists,
// as long as the pre-flight counts reserved pages as taken (free minus reserved: the kernel
// keeps reserved pages in its free count until they are faulted in; pool_reserved.h). Where
// the kernel cannot tell reservations per node (a page size with pools on several nodes), the
// start holds the lock until its pages are faulted in instead.
//
// The lock is an flock on /sys/kernel/mm/hugepages (the pool's own directory: host-wide, there
// whenever hugetlb is, needs no write access anywhere), released when the object goes.
#pragma once

#include <chrono>
#include <functional>

namespace qlaunch::launcher {

class HugepagePoolLock {
 public:
  // Waits for the lock, calling `check` (which may throw, e.g. on SIGINT) every few ms while
  // another start holds it. Without hugetlb on the host there is nothing to lock.
  explicit HugepagePoolLock(const std::function<void()>& check = {});
  ~HugepagePoolLock();
  HugepagePoolLock(const HugepagePoolLock&) = delete;
  HugepagePoolLock& operator=(const HugepagePoolLock&) = delete;

  void Release();
  std::chrono::milliseconds waited() const { return waited_; }

 private:
  int fd_ = -1;
  std::chrono::milliseconds waited_{0};
};

}  // namespace qlaunch::launcher
