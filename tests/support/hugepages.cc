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

std::string PoolFile(uint64_t page_bytes, const char* name) {
  return "/sys/kernel/mm/hugepages/hugepages-" + std::to_string(page_bytes >> 10) + "kB/" + name;
}

uint64_t ReadCount(const std::string& path) {
  std::ifstream in(path);
  uint64_t n = 0;
  return in >> n ? n : 0;
}
}  // namespace

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
uint64_t HugepagesFree(uint64_t page_bytes) { return ReadCount(PoolFile(page_bytes, "free_hugepages")); }
uint64_t HugepagesTotal(uint64_t page_bytes) { return ReadCount(PoolFile(page_bytes, "nr_hugepages")); }

bool SetNrHugepages(uint64_t pages, std::string* error, uint64_t page_bytes) {
  const std::string path = page_bytes ? PoolFile(page_bytes, "nr_hugepages") : kNrHugepages;
  std::ofstream out(path);
  out << pages << "\n";
  out.flush();
  if (!out) {
    if (error) *error = "cannot write " + path + (::geteuid() != 0 ? " (not root)" : "");
    return false;
  }
  return true;
}

HugepagePool HugepagePool::AtLeast(uint64_t free_pages, uint64_t page_bytes) {
  HugepagePool p;
  p.page_bytes_ = page_bytes;
  p.Resize(free_pages, false);
  return p;
}

HugepagePool HugepagePool::Exactly(uint64_t free_pages, uint64_t page_bytes) {
  HugepagePool p;
  p.page_bytes_ = page_bytes;
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
  auto free_now = [this] { return page_bytes_ ? HugepagesFree(page_bytes_) : HugepagesFree(); };
  auto total_now = [this] { return page_bytes_ ? HugepagesTotal(page_bytes_) : HugepagesTotal(); };
  uint64_t total = total_now(), free = free_now();
  original_total_ = total;
  if (!exact && free >= free_pages) return;
  uint64_t in_use = total - free;
  uint64_t want = in_use + free_pages;
  if (!SetNrHugepages(want, &error_, page_bytes_)) return;
  uint64_t now_free = free_now();
  if (now_free < free_pages) {
    // Memory long in use (a build, a test run before) is fragmented: the kernel found no
    // contiguous room (a CI run here got one of two 1 GiB pages). Compact it and ask again; for
    // pages of 1 GiB and more, drop the clean page cache first (it may sit in every 1 GiB range).
    if (page_bytes_ >= (1ull << 30)) std::ofstream("/proc/sys/vm/drop_caches") << "1\n";
    std::ofstream("/proc/sys/vm/compact_memory") << "1\n";
    if (!SetNrHugepages(want, &error_, page_bytes_)) return;
    now_free = free_now();
  }
  if (exact ? now_free != free_pages : now_free < free_pages) {
    short_of_memory_ = true;
    error_ = "asked the kernel for " + std::to_string(free_pages) + " free " +
             (page_bytes_ ? std::to_string(page_bytes_ >> 20) + " MiB " : "") + "hugepages, it has " +
             std::to_string(now_free) + " (" + std::to_string(total_now()) + " in the pool)";
  }
}

HugepagePool::HugepagePool(HugepagePool&& o) noexcept
    : lock_fd_(o.lock_fd_),
      original_total_(o.original_total_),
      page_bytes_(o.page_bytes_),
      error_(std::move(o.error_)),
      short_of_memory_(o.short_of_memory_) {
  o.original_total_.reset();
  o.lock_fd_ = -1;
}

HugepagePool::~HugepagePool() {
  if (original_total_) SetNrHugepages(*original_total_, nullptr, page_bytes_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace qlaunch::testing
