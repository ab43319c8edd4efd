#include "launcher/lifecycle/start/process_clock.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace qlaunch::launcher {

namespace {

ProcessClock::Clock::time_point g_entry;
ProcessClock::Clock::duration g_startup{0};

// Runs before every default-priority initialiser of the executable. Plain system calls only:
// nothing of the C++ runtime this executable initialises itself is needed.
__attribute__((constructor(101))) void RecordProcessEntry() {
  g_entry = ProcessClock::Clock::now();
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  const std::chrono::nanoseconds cpu(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec);
  char buf[128];
  buf[0] = '\0';
  const int fd = ::open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    buf[n > 0 ? n : 0] = '\0';
  }
  g_startup = StartupFromSchedstat(buf, cpu);
}

}  // namespace

std::chrono::nanoseconds StartupFromSchedstat(const char* text, std::chrono::nanoseconds cpu) {
  char* end = nullptr;
  const unsigned long long run = std::strtoull(text, &end, 10);
  if (end == text || *end != ' ') return cpu;
  const char* next = end + 1;
  const unsigned long long wait = std::strtoull(next, &end, 10);
  if (end == next || (*end != ' ' && *end != '\n' && *end != '\0')) return cpu;
  return std::max(std::chrono::nanoseconds(static_cast<int64_t>(run)), cpu) +
         std::chrono::nanoseconds(static_cast<int64_t>(wait));
}

ProcessClock::Clock::time_point ProcessClock::Entry() {
  // Linked in without the constructor having run (a test binary that never references this file
  // before main would still run it; this is for safety): now is the best there is.
  if (g_entry == Clock::time_point{}) g_entry = Clock::now();
  return g_entry;
}

ProcessClock::Clock::duration ProcessClock::StartupEstimate() { return g_startup; }

int64_t ProcessClock::EntryNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Entry().time_since_epoch()).count();
}

}  // namespace qlaunch::launcher
