// Small pieces the starters of `qlaunch bench` share (launcher/bench/bench_starters.cc, bench_qemu.cc).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>

#include "launcher/lifecycle/start/start_interrupt.h"

namespace qlaunch::launcher::bench {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

inline milliseconds Left(Clock::time_point deadline) {
  return std::max(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), milliseconds(1));
}

inline void ThrowIfInterrupted(const StartInterrupt* interrupt) {
  if (interrupt) interrupt->ThrowIfInterrupted();
}

// An action for the interrupt watcher while this lives. ClearActions waits for an action that
// is running at that moment (the watcher holds the lock), so what it touches may go right after.
class InterruptAction {
 public:
  InterruptAction(StartInterrupt* interrupt, std::function<void()> action) : interrupt_(interrupt) {
    if (interrupt_) interrupt_->OnInterrupt(std::move(action));
  }
  ~InterruptAction() { Clear(); }
  InterruptAction(const InterruptAction&) = delete;
  InterruptAction& operator=(const InterruptAction&) = delete;
  void Clear() {
    if (interrupt_) interrupt_->ClearActions();
    interrupt_ = nullptr;
  }

 private:
  StartInterrupt* interrupt_;
};

}  // namespace qlaunch::launcher::bench
