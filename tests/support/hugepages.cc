#include "support/hugepages.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace qlaunch::testing {

namespace {
constexpr const char* kNrHugepages = "/proc/sys/vm/nr_hugepages";
}

std::optional<uint64_t> MeminfoValue(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    uint64_t value = 0;
    if (fields >> value) return value;
  }
  return std::nullopt;
}

uint64_t HugepagesFree() { return MeminfoValue("HugePages_Free").value_or(0); }
uint64_t HugepagesTotal() { return MeminfoValue("HugePages_Total").value_or(0); }
uint64_t DefaultHugepageBytes() { return MeminfoValue("Hugepagesize").value_or(0) * 1024; }

bool SetNrHugepages(uint64_t pages, std::string* error) {
  std::ofstream out(kNrHugepages);
  out << pages << "\n";
  out.flush();
  if (!out) {
    if (error) *error = std::string("cannot write ") + kNrHugepages + (::geteuid() != 0 ? " (not root)" : "");
    return false;
  }
  return true;
}

HugepagePool HugepagePool::AtLeast(uint64_t free_pages) {
  HugepagePool p;
  p.Resize(free_pages, false);
  return p;
}

HugepagePool HugepagePool::Exactly(uint64_t free_pages) {
  HugepagePool p;
  p.Resize(free_pages, true);
  return p;
}

HugepagePool HugepagePool::LockOnly() {
  HugepagePool p;
  p.Lock();
  return p;
}

void HugepagePool::Lock() {
  lock_fd_ = ::open(kHugepageLockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (lock_fd_ >= 0) {
    while (::flock(lock_fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
}

void HugepagePool::Resize(uint64_t free_pages, bool exact) {
  Lock();
  if (::geteuid() != 0) {
    error_ = "resizing the hugepage pool needs root";
    return;
  }
  uint64_t total = HugepagesTotal(), free = HugepagesFree();
  original_total_ = total;
  if (!exact && free >= free_pages) return;
  uint64_t in_use = total - free;
  uint64_t want = in_use + free_pages;
  if (!SetNrHugepages(want, &error_)) return;
  uint64_t now_free = HugepagesFree();
  if (exact ? now_free != free_pages : now_free < free_pages)
    error_ = "asked the kernel for " + std::to_string(free_pages) + " free hugepages, it has " +
             std::to_string(now_free) + " (" + std::to_string(HugepagesTotal()) + " in the pool)";
}

HugepagePool::HugepagePool(HugepagePool&& o) noexcept
    : lock_fd_(o.lock_fd_), original_total_(o.original_total_), error_(std::move(o.error_)) {
  o.original_total_.reset();
  o.lock_fd_ = -1;
}

HugepagePool::~HugepagePool() {
  if (original_total_) SetNrHugepages(*original_total_, nullptr);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace qlaunch::testing
