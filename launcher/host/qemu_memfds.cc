#include "launcher/host/qemu_memfds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

using FileId = std::pair<dev_t, ino_t>;

struct HeldMemfd {
  std::string id;  // the backend id in its name
  fs::path path;   // /proc/<pid>/fd/N
  FileId file{};
};

// Every memfd of the domain QEMU holds, in fd order (one memory may be held twice).
std::vector<HeldMemfd> HeldMemfds(pid_t pid, const std::string& domain) {
  const std::string prefix = "/memfd:qlaunch:" + domain + ":";
  std::vector<HeldMemfd> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    std::string target = fs::read_symlink(e.path(), link_ec).string();
    if (target.rfind(prefix, 0) != 0) continue;
    target = target.substr(prefix.size());
    if (const size_t deleted = target.find(" (deleted)"); deleted != std::string::npos) target.resize(deleted);
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0) continue;
    out.push_back({target, e.path(), {st.st_dev, st.st_ino}});
  }
  return out;
}

// The files QEMU maps (/proc/<pid>/maps: device "MM:mm" in hex, then inode).
std::set<FileId> MappedFiles(pid_t pid) {
  std::set<FileId> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream f(line);
    std::string range, perms, offset, dev;
    unsigned long long inode = 0;
    unsigned major_no = 0, minor_no = 0;
    if (!(f >> range >> perms >> offset >> dev >> inode) || inode == 0) continue;
    if (std::sscanf(dev.c_str(), "%x:%x", &major_no, &minor_no) == 2)
      out.insert({makedev(major_no, minor_no), static_cast<ino_t>(inode)});
  }
  return out;
}

}  // namespace

std::map<std::string, fs::path> QemuMemfds(pid_t pid, const std::string& domain) {
  // A backend deleted at run time can leave a memfd of its id behind (one QEMU inherited at its
  // start), and one attached since under the same id is the memory in use: a mapped one first.
  const std::set<FileId> mapped = MappedFiles(pid);
  std::map<std::string, fs::path> by_id;
  std::set<std::string> mapped_ids;
  for (const HeldMemfd& m : HeldMemfds(pid, domain)) {
    const bool in_use = mapped.count(m.file) != 0;
    if (in_use && mapped_ids.insert(m.id).second) by_id[m.id] = m.path;
    else if (!in_use) by_id.emplace(m.id, m.path);
  }
  return by_id;
}

uint64_t ReleaseUnmappedMemfd(pid_t pid, const std::string& domain, const std::string& id,
                              std::chrono::milliseconds wait) {
  std::vector<HeldMemfd> held;
  for (HeldMemfd& m : HeldMemfds(pid, domain))
    if (m.id == id) held.push_back(std::move(m));
  if (held.empty()) return 0;
  // QEMU unmaps a deleted backend's memory after object-del has returned (an RCU callback of its own).
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto any_mapped = [&] {
    const std::set<FileId> mapped = MappedFiles(pid);
    for (const HeldMemfd& m : held)
      if (mapped.count(m.file)) return true;
    return false;
  };
  while (any_mapped()) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("QEMU " + std::to_string(pid) + " still maps the memory of " + id);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // What QEMU holds now: its own open of the memory went with the mapping.
  uint64_t freed = 0;
  std::set<FileId> done;
  for (const HeldMemfd& m : HeldMemfds(pid, domain)) {
    if (m.id != id || !done.insert(m.file).second) continue;
    const int fd = ::open(m.path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) continue;  // closed since it was listed
    if (fd < 0) throw std::runtime_error("cannot open " + m.path.string() + ": " + std::strerror(errno));
    struct stat st {};
    std::string error;
    if (::fstat(fd, &st) != 0)
      error = "cannot stat " + m.path.string() + ": " + std::strerror(errno);
    else if (st.st_size > 0 && ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size) != 0)
      error = "cannot free the memory of " + id + " (" + m.path.string() + "): " + std::strerror(errno);
    ::close(fd);
    if (!error.empty()) throw std::runtime_error(error);
    freed += uint64_t(st.st_blocks) * 512;
  }
  return freed;
}

}  // namespace qlaunch::launcher
