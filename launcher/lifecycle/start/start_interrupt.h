// StartInterrupt: SIGINT/SIGTERM during `qlaunch start`. While alive, the signals do not kill
// qlaunch; the handler only records the signal and wakes a watcher thread, which runs the
// registered actions (raise the preallocator's stop flag, SIGKILL the QEMU being started: that
// also ends any QMP wait, since QEMU's socket closes). The start then fails through its normal
// error path, whose RAII guards release everything. Previous handlers come back on
// destruction.
//
// They nest (a verb that holds one around StartDomain, which takes its own: restore): only the
// outermost installs and restores the handlers and clears the recorded signal, so a signal
// between the inner one's end and the outer one's next look is not lost to the default action.
// A signal is recorded once for all of them; it fires the innermost's actions, and the
// enclosing one's as soon as the inner one ends. One thread uses them.
#pragma once

#include <functional>
#include <string>
#include <mutex>
#include <thread>
#include <vector>

namespace qlaunch::launcher {

class StartInterrupt {
 public:
  StartInterrupt();
  ~StartInterrupt();
  StartInterrupt(const StartInterrupt&) = delete;
  StartInterrupt& operator=(const StartInterrupt&) = delete;

  // Runs on the watcher thread when a signal arrives (at once if one already has).
  void OnInterrupt(std::function<void()> action);
  // Drops every action (before the objects they touch go away).
  void ClearActions();

  int signal() const;  // 0, SIGINT or SIGTERM
  // Throws std::runtime_error("interrupted by SIGINT") when a signal arrived.
  void ThrowIfInterrupted() const;  // throws InterruptedBy(signal()) once one came

 private:
  void Watch();
  void Fire();
  int wake_fd_ = -1;
  int stop_fd_ = -1;
  int outer_wake_fd_ = -1;  // the enclosing one's, woken again when this one ends
  std::mutex mu_;
  std::vector<std::function<void()>> actions_;
  bool fired_ = false;
  std::thread watcher_;
};

// "interrupted by SIGINT" (or SIGTERM): how every verb words the signal that ended its work.
std::string InterruptedBy(int sig);

}  // namespace qlaunch::launcher
