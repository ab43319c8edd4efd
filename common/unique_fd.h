// UniqueFd: one file descriptor, closed when its owner goes (-1: none). Movable, not copyable.
// The one fd owner of the launcher's host-side code (spawn, taps, guest agent, hotplug);
// prealloc/memfd.h's Memfd is the fd plus what the memory is.
#pragma once

#include <unistd.h>

#include <utility>

namespace qlaunch {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes the returned fd.
  int Release() { return std::exchange(fd_, -1); }
  // Closes the fd held (unless it is `fd` itself) and holds `fd` instead.
  void Reset(int fd = -1) {
    if (fd_ >= 0 && fd_ != fd) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace qlaunch
