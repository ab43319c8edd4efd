#include "prealloc/progress_line.h"

#include <algorithm>

namespace qlaunch::prealloc {

std::string FormatProgress(uint64_t bytes_done, uint64_t bytes_total, double elapsed_seconds, const char* label) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, "%s: %.1f/%.1f GiB", label, bytes_done / kGiB,
                        bytes_total / kGiB);
  std::string line(buf, static_cast<size_t>(n));
  if (bytes_done > 0 && elapsed_seconds > 0) {
    double rate = bytes_done / elapsed_seconds;  // bytes per second
    double eta = bytes_done >= bytes_total ? 0.0 : (bytes_total - bytes_done) / rate;
    n = std::snprintf(buf, sizeof buf, "  %.2f GB/s  ETA %.1fs", rate / 1e9, eta);
    line.append(buf, static_cast<size_t>(n));
  }
  return line;
}

ProgressLine::ProgressLine(std::FILE* out, const char* label)
    : out_(out), label_(label), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  if (open_) Finish();
}

void ProgressLine::Update(uint64_t bytes_done, uint64_t bytes_total) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = FormatProgress(bytes_done, bytes_total, elapsed, label_);
  size_t width = line.size();
  line.append(last_width_ > width ? last_width_ - width : 0, ' ');  // wipe a longer old line
  last_width_ = width;
  std::fprintf(out_, "\r%s", line.c_str());
  std::fflush(out_);
  open_ = true;
}

void ProgressLine::Finish() {
  if (!open_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  open_ = false;
}

}  // namespace qlaunch::prealloc
