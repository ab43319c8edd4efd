// systemd's notification socket as a test plays systemd: a datagram socket bound at a path, to give
// a `qlaunch run` as $NOTIFY_SOCKET, and the messages it sends there (READY=1, MAINPID=).
#pragma once

#include <chrono>
#include <string>

namespace qlaunch::testing {

class NotifySocket {
 public:
  explicit NotifySocket(std::string path);  // replaces a file left at `path`
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::string& path() const { return path_; }
  bool ok() const { return fd_ >= 0; }
  // The next message, waiting up to `timeout`; "" when none came.
  std::string Receive(std::chrono::seconds timeout);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace qlaunch::testing
