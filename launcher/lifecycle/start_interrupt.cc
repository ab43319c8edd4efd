#include "launcher/lifecycle/start_interrupt.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace qlaunch::launcher {

namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_wake_fd{-1};
struct sigaction g_old_int {}, g_old_term {};

void Handler(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  int fd = g_wake_fd.load();
  if (fd >= 0) {
    uint64_t one = 1;
    int saved = errno;
    (void)!::write(fd, &one, sizeof one);
    errno = saved;
  }
}

}  // namespace

StartInterrupt::StartInterrupt() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0 || stop_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  g_signal = 0;
  g_wake_fd = wake_fd_;
  struct sigaction sa {};
  sa.sa_handler = Handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
  watcher_ = std::thread([this] { Watch(); });
}

StartInterrupt::~StartInterrupt() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof one);
  if (watcher_.joinable()) watcher_.join();
  g_wake_fd = -1;
  ::close(wake_fd_);
  ::close(stop_fd_);
}

void StartInterrupt::Watch() {
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN)) return;
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof count);
      Fire();
    }
  }
}

void StartInterrupt::Fire() {
  std::lock_guard lock(mu_);
  fired_ = true;
  for (auto& action : actions_) action();
}

void StartInterrupt::OnInterrupt(std::function<void()> action) {
  std::lock_guard lock(mu_);
  if (fired_) action();
  actions_.push_back(std::move(action));
}

void StartInterrupt::ClearActions() {
  std::lock_guard lock(mu_);
  actions_.clear();
}

int StartInterrupt::signal() const { return g_signal.load(); }

void StartInterrupt::ThrowIfInterrupted() const {
  int sig = signal();
  if (sig) throw std::runtime_error(std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
}

}  // namespace qlaunch::launcher
