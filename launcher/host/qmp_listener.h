// The QMP socket of a started domain, made by qlaunch and handed to QEMU as a listening fd
// (-chardev socket,id=qmp,fd=N,server=on): QEMU, unprivileged, needs no access to the state
// dir, and qlaunch can connect at once instead of polling for the socket to appear. qlaunch
// closes its own copy after the spawn, so if QEMU dies the pending connection is reset at once.
#pragma once

#include <filesystem>

namespace qlaunch::launcher {

class QmpListener {
 public:
  // An unbound UNIX stream socket (close-on-exec); its fd number goes into the plan.
  QmpListener();
  ~QmpListener();
  QmpListener(const QmpListener&) = delete;
  QmpListener& operator=(const QmpListener&) = delete;

  int fd() const { return fd_; }
  // bind (mode 0600, owner root), listen. Throws std::runtime_error naming the path.
  void Listen(const std::filesystem::path& path);
  void Close();

 private:
  int fd_ = -1;
};

}  // namespace qlaunch::launcher
