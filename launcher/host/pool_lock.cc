#include "launcher/host/pool_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace qlaunch::launcher {

namespace {
constexpr const char* kPoolDir = "/sys/kernel/mm/hugepages";
}

HugepagePoolLock::HugepagePoolLock(const std::function<void()>& check) {
  fd_ = ::open(kPoolDir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) return;  // no hugetlb here: no pool to share
  const auto start = std::chrono::steady_clock::now();
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int err = errno;
      Release();
      throw std::runtime_error(std::string("cannot lock the hugepage pool (flock ") + kPoolDir + "): " + std::strerror(err));
    }
    try {
      if (check) check();
    } catch (...) {
      Release();
      throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  waited_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
}

HugepagePoolLock::~HugepagePoolLock() { Release(); }

void HugepagePoolLock::Release() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor drops the flock
  fd_ = -1;
}

}  // namespace qlaunch::launcher
