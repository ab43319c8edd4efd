// ProbeCaps: start the binary with "-machine none -S", ask it over QMP, cache the answer.
#pragma once

#include <filesystem>
#include <chrono>
#include <string>

#include "qemu_cmd/caps.h"

namespace qlaunch::qemu {

struct ProbeOptions {
  // Cache directory; default $QLAUNCH_CACHE_DIR, else $XDG_CACHE_HOME/qlaunch, else ~/.cache/qlaunch.
  std::filesystem::path cache_dir;
  bool use_cache = true;
  std::chrono::milliseconds timeout{20000};
};

// Throws std::runtime_error with a clear reason (binary missing, not executable, exited,
// QMP never answered) when the binary cannot be probed.
QemuCaps ProbeCaps(const std::string& binary, const ProbeOptions& opts = {});

}  // namespace qlaunch::qemu
