#include "launcher/lifecycle/start/start_qemu_progress.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "prealloc/progress_line.h"

namespace qlaunch::launcher {

std::optional<uint64_t> ProcessMemoryBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) return std::nullopt;
  uint64_t kib = 0;
  std::string line;
  while (std::getline(in, line)) {
    for (const char* key : {"HugetlbPages:", "RssAnon:", "RssShmem:", "RssFile:"}) {
      if (line.rfind(key, 0) == 0) kib += std::strtoull(line.c_str() + std::char_traits<char>::length(key), nullptr, 10);
    }
  }
  return kib * 1024;
}

QemuProgress::QemuProgress(pid_t pid, uint64_t total_bytes, prealloc::ProgressLine* line)
    : pid_(pid), total_(total_bytes), line_(line) {
  poller_ = std::thread([this] {
    while (!stop_.load()) {
      if (auto bytes = ProcessMemoryBytes(pid_)) line_->Update(std::min(*bytes, total_), total_);
      for (int i = 0; i < 25 && !stop_.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
}

QemuProgress::~QemuProgress() { Finish(); }

void QemuProgress::Finish() {
  if (!poller_.joinable()) return;
  stop_.store(true);
  poller_.join();
  if (auto bytes = ProcessMemoryBytes(pid_)) line_->Update(std::min(*bytes, total_), total_);
}

}  // namespace qlaunch::launcher
