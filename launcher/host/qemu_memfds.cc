#include "launcher/host/qemu_memfds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace qlaunch::launcher {

std::map<std::string, std::filesystem::path> QemuMemfds(pid_t pid, const std::string& domain) {
  namespace fs = std::filesystem;
  const std::string prefix = "/memfd:qlaunch:" + domain + ":";
  std::map<std::string, fs::path> by_id;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    std::string target = fs::read_symlink(e.path(), link_ec).string();
    if (target.rfind(prefix, 0) != 0) continue;
    target = target.substr(prefix.size());
    if (const size_t deleted = target.find(" (deleted)"); deleted != std::string::npos) target.resize(deleted);
    by_id.emplace(target, e.path());
  }
  return by_id;
}

namespace {

// Whether a line of /proc/<pid>/maps maps the file of `st` (device "MM:mm" in hex, then inode).
bool MapsFile(const std::string& pid, const struct stat& st) {
  std::ifstream maps("/proc/" + pid + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream f(line);
    std::string range, perms, offset, dev;
    unsigned long long inode = 0;
    if (!(f >> range >> perms >> offset >> dev >> inode) || inode != st.st_ino) continue;
    unsigned major_no = 0, minor_no = 0;
    if (std::sscanf(dev.c_str(), "%x:%x", &major_no, &minor_no) == 2 && major_no == major(st.st_dev) &&
        minor_no == minor(st.st_dev))
      return true;
  }
  return false;
}

// QEMU unmaps a deleted backend's memory after object-del has returned (an RCU callback of its own).
bool Unmapped(const std::string& pid, const struct stat& st, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (MapsFile(pid, st)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace

uint64_t ReleaseUnmappedMemfd(pid_t pid, const std::string& domain, const std::string& id,
                              std::chrono::milliseconds wait) {
  const auto memfds = QemuMemfds(pid, domain);
  const auto it = memfds.find(id);
  if (it == memfds.end()) return 0;
  const int fd = ::open(it->second.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + it->second.string() + ": " + std::strerror(errno));
  struct stat st {};
  std::string error;
  if (::fstat(fd, &st) != 0) {
    error = "cannot stat " + it->second.string() + ": " + std::strerror(errno);
  } else if (!Unmapped(std::to_string(pid), st, wait)) {
    error = "QEMU " + std::to_string(pid) + " still maps the memory of " + id;
  } else if (st.st_size > 0 &&
             ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size) != 0) {
    error = "cannot free the memory of " + id + " (" + it->second.string() + "): " + std::strerror(errno);
  }
  const uint64_t freed = error.empty() ? uint64_t(st.st_blocks) * 512 : 0;
  ::close(fd);
  if (!error.empty()) throw std::runtime_error(error);
  return freed;
}

}  // namespace qlaunch::launcher
