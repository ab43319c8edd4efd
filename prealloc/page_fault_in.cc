#include "prealloc/page_fault_in.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <mutex>
#include <vector>

namespace qlaunch::prealloc {
namespace {

// The jump target of the thread currently inside TouchPages, else null. initial-exec TLS: a
// plain load from the thread pointer, safe in a signal handler.
__attribute__((tls_model("initial-exec"))) thread_local sigjmp_buf* t_touch_jmp = nullptr;

std::mutex g_guard_mu;
unsigned g_guard_count = 0;
struct sigaction g_old_sigbus {};

void OnSigbus(int sig, siginfo_t* info, void* ctx) {
  if (sigjmp_buf* jmp = t_touch_jmp) siglongjmp(*jmp, 1);
  // Not one of ours: behave as if we were not here.
  if (g_old_sigbus.sa_flags & SA_SIGINFO) {
    if (g_old_sigbus.sa_sigaction) return g_old_sigbus.sa_sigaction(sig, info, ctx);
  } else if (g_old_sigbus.sa_handler != SIG_DFL && g_old_sigbus.sa_handler != SIG_IGN) {
    return g_old_sigbus.sa_handler(sig);
  }
  signal(SIGBUS, SIG_DFL);
  raise(SIGBUS);
}

}  // namespace

int MadvisePopulateWrite(std::byte* addr, size_t len) {
  while (madvise(addr, len, MADV_POPULATE_WRITE) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

size_t TouchPages(std::byte* addr, size_t len, size_t page_bytes) {
  sigjmp_buf jmp;
  volatile size_t done = 0;  // read after siglongjmp: must not live in a register
  if (sigsetjmp(jmp, 1) == 0) {  // 1: restore the signal mask (SIGBUS is blocked in the handler)
    t_touch_jmp = &jmp;
    for (size_t off = 0; off < len; off += page_bytes) {
      *reinterpret_cast<volatile char*>(addr + off) = 0;
      done = off + page_bytes;
    }
  }
  t_touch_jmp = nullptr;
  return done;
}

SigbusGuard::SigbusGuard() {
  std::lock_guard lock(g_guard_mu);
  if (g_guard_count++ > 0) return;
  struct sigaction sa {};
  sa.sa_sigaction = OnSigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &g_old_sigbus);
}

SigbusGuard::~SigbusGuard() {
  std::lock_guard lock(g_guard_mu);
  if (--g_guard_count > 0) return;
  sigaction(SIGBUS, &g_old_sigbus, nullptr);
}

uint64_t ResidentBytes(const std::byte* addr, size_t len, size_t page_bytes) {
  const size_t base = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  constexpr size_t kWindow = size_t{1} << 30;  // 256 Ki entries of mincore vector at a time
  std::vector<unsigned char> vec;
  uint64_t resident = 0;
  for (size_t off = 0; off < len; off += kWindow) {
    size_t n = std::min(kWindow, len - off);
    vec.assign((n + base - 1) / base, 0);
    if (mincore(const_cast<std::byte*>(addr + off), n, vec.data()) != 0) return 0;
    // Count whole pages of page_bytes: a page is resident when its first base page is.
    for (size_t p = 0; p < n; p += page_bytes)
      if (vec[p / base] & 1) resident += page_bytes;
  }
  return resident;
}

}  // namespace qlaunch::prealloc
