// ProgressLine: one status line on a terminal, rewritten in place with '\r':
//   "prealloc: 3.2/8.0 GiB  2.41 GB/s  ETA 2.0s"
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace qlaunch::prealloc {

// The line's text (no '\r'). Rate and ETA are left out until some bytes are done.
std::string FormatProgress(uint64_t bytes_done, uint64_t bytes_total, double elapsed_seconds,
                           const char* label = "prealloc");

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out = stderr, const char* label = "prealloc");  // label: "migrate", ...
  ~ProgressLine();  // ends the line if it was drawn and not finished
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void Update(uint64_t bytes_done, uint64_t bytes_total);  // redraws the line
  void Finish();                                           // ends it with '\n'

 private:
  std::FILE* out_;
  const char* label_;
  std::chrono::steady_clock::time_point start_;
  size_t last_width_ = 0;
  bool open_ = false;
};

}  // namespace qlaunch::prealloc
