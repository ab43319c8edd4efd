#include "launcher/lifecycle/start/start_interrupt.h"

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
std::atomic<int> g_wake_fd{-1};  // the innermost's
int g_depth = 0;                  // how many are alive
struct sigaction g_old_int {}, g_old_term {};

void Wake(int fd) {
  uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}

void Handler(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  int fd = g_wake_fd.load();
  if (fd >= 0) {
    int saved = errno;
    Wake(fd);
    errno = saved;
  }
}

}  // namespace

StartInterrupt::StartInterrupt() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0 || stop_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  if (g_depth++ == 0) {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = Handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, &g_old_int);
    ::sigaction(SIGTERM, &sa, &g_old_term);
  }
  outer_wake_fd_ = g_wake_fd.exchange(wake_fd_);
  if (g_signal.load() != 0) Wake(wake_fd_);  // it came under an enclosing one: fire at once
  watcher_ = std::thread([this] { Watch(); });
}

StartInterrupt::~StartInterrupt() {
  if (--g_depth == 0) {
    ::sigaction(SIGINT, &g_old_int, nullptr);
    ::sigaction(SIGTERM, &g_old_term, nullptr);
  }
  g_wake_fd = outer_wake_fd_;
  // A signal this one took is the enclosing one's too (it wakes once more, harmlessly, if it
  // had fired already).
  if (outer_wake_fd_ >= 0 && g_signal.load() != 0) Wake(outer_wake_fd_);
  Wake(stop_fd_);
  if (watcher_.joinable()) watcher_.join();
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
  if (sig) throw std::runtime_error(InterruptedBy(sig));
}

std::string InterruptedBy(int sig) { return std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"); }

}  // namespace qlaunch::launcher
