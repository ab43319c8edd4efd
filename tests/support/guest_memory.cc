#include "support/guest_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "launcher/host/qemu_memfds.h"
#include "launcher/host/warm_pool.h"

namespace qlaunch::testing {

namespace {

namespace fs = std::filesystem;

// Backend id -> the warm pool file QEMU `pid` holds of those the domain's records name, as
// /proc/<pid>/fd/N.
std::map<std::string, fs::path> HeldWarmFiles(pid_t pid, const fs::path& domain_dir) {
  std::map<std::string, fs::path> out;
  const std::map<std::string, fs::path> recorded = launcher::DomainWarmFiles(domain_dir);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    const fs::path target = fs::read_symlink(e.path(), link_ec);
    for (const auto& [id, path] : recorded)
      if (target == path) out.emplace(id, e.path());
  }
  return out;
}

// Calls fn(backend id, mapping, size) once per memfd of the domain that QEMU `pid` holds.
void ForEachMemfd(pid_t pid, const std::string& domain, const fs::path& domain_dir, int prot,
                  const std::function<void(const std::string&, void*, size_t)>& fn) {
  std::map<std::string, fs::path> by_id = launcher::QemuMemfds(pid, domain);
  if (!domain_dir.empty()) by_id.merge(HeldWarmFiles(pid, domain_dir));
  for (const auto& [id, path] : by_id) {
    const int fd = ::open(path.c_str(), prot & PROT_WRITE ? O_RDWR : O_RDONLY);
    if (fd < 0) continue;
    struct stat st {};
    ::fstat(fd, &st);
    const size_t size = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, prot, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) continue;
    fn(id, p, size);
    ::munmap(p, size);
  }
}

}  // namespace

int FillQemuMemfds(pid_t pid, const std::string& domain, uint64_t seed, const fs::path& domain_dir) {
  std::mt19937_64 rng(seed);
  int n = 0;
  ForEachMemfd(pid, domain, domain_dir, PROT_READ | PROT_WRITE, [&](const std::string&, void* p, size_t size) {
    auto* words = static_cast<uint64_t*>(p);
    for (size_t i = 0; i < size / 8; ++i) words[i] = rng();
    ++n;
  });
  return n;
}

std::string DigestQemuMemfds(pid_t pid, const std::string& domain, const fs::path& domain_dir) {
  std::string out;
  ForEachMemfd(pid, domain, domain_dir, PROT_READ, [&](const std::string& id, void* p, size_t size) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over 64-bit words
    const auto* words = static_cast<const uint64_t*>(p);
    for (size_t i = 0; i < size / 8; ++i) h = (h ^ words[i]) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    out += (out.empty() ? "" : " ") + id + "=" + hex;
  });
  return out;
}

}  // namespace qlaunch::testing
