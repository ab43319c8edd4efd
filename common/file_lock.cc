#include "common/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace qlaunch {

UniqueFd LockExclusive(const std::filesystem::path& path, LockOn on, const char* what) {
  UniqueFd fd(on == LockOn::kDirectory ? ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                       : ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid())
    throw std::runtime_error(std::string("cannot open ") + what + " " + path.string() + ": " + std::strerror(errno));
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    throw std::runtime_error(std::string("cannot lock ") + what + " " + path.string() + ": " + std::strerror(errno));
  }
  return fd;
}

}  // namespace qlaunch
