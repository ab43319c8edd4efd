#include "launcher/host/qmp_listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace qlaunch::launcher {

QmpListener::QmpListener() {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("cannot create the QMP socket: ") + std::strerror(errno));
}

QmpListener::~QmpListener() { Close(); }

void QmpListener::Listen(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof addr.sun_path)
    throw std::runtime_error("QMP socket path " + p + " is longer than " + std::to_string(sizeof addr.sun_path - 1) +
                             " bytes (choose a shorter QLAUNCH_STATE_DIR)");
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  // The umask makes the socket 0600 from the start: no moment where another user may connect.
  mode_t old = ::umask(0177);
  int rc = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = errno;
  ::umask(old);
  if (rc != 0) throw std::runtime_error("cannot bind the QMP socket " + p + ": " + std::strerror(err));
  if (::listen(fd_, 4) != 0) throw std::runtime_error("cannot listen on the QMP socket " + p + ": " + std::strerror(errno));
}

void QmpListener::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace qlaunch::launcher
