// QemuProgress: a progress line for the memory QEMU preallocates itself. QEMU does not report
// it, so this polls what its process has resident: HugetlbPages + RssAnon + RssShmem + RssFile
// from /proc/<pid>/status (4 times a second, capped at the expected total). Only approximate
// (QEMU's own allocations count too), which is fine for a progress line.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>

namespace qlaunch::prealloc {
class ProgressLine;
}

namespace qlaunch::launcher {

// The sum above in bytes; nullopt when the process is gone.
std::optional<uint64_t> ProcessMemoryBytes(pid_t pid);

class QemuProgress {
 public:
  QemuProgress(pid_t pid, uint64_t total_bytes, prealloc::ProgressLine* line);
  ~QemuProgress();
  void Finish();  // stops polling (idempotent); a last update shows the final figure

 private:
  pid_t pid_;
  uint64_t total_;
  prealloc::ProgressLine* line_;
  std::atomic<bool> stop_{false};
  std::thread poller_;
};

}  // namespace qlaunch::launcher
