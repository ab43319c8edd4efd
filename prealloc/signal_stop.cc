#include "prealloc/signal_stop.h"

#include <stdexcept>

namespace qlaunch::prealloc {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
std::atomic<bool> g_installed{false};

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "flags set from a signal handler must be lock-free");

void OnSignal(int sig) {
  g_signal.store(sig, std::memory_order_relaxed);
  g_stop.store(true, std::memory_order_relaxed);
}

}  // namespace

SignalStop::SignalStop() {
  if (g_installed.exchange(true)) throw std::logic_error("SignalStop: already installed");
  g_stop = false;
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

SignalStop::~SignalStop() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  g_installed = false;
}

const std::atomic<bool>& SignalStop::flag() const { return g_stop; }

int SignalStop::signal() const { return g_signal.load(std::memory_order_relaxed); }

}  // namespace qlaunch::prealloc
