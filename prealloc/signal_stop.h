// SignalStop: while alive, SIGINT and SIGTERM raise a flag instead of killing the process, so
// a long preallocation or hold can end cleanly. The previous handlers come back on
// destruction. One at a time per process.
#pragma once

#include <atomic>
#include <csignal>

namespace qlaunch::prealloc {

class SignalStop {
 public:
  SignalStop();
  ~SignalStop();
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  const std::atomic<bool>& flag() const;
  bool stopped() const { return flag().load(std::memory_order_relaxed); }
  int signal() const;  // the signal that raised the flag, 0 if none

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace qlaunch::prealloc
