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
// QMP never answered) when the binary cannot be probed. A QMP exchange that goes wrong (an
// error reply, an unreadable answer) is retried once with a fresh QEMU, with a warning on
// stderr.
// A name without '/' is looked up in $PATH; the result's `binary` is `binary` as passed.
// The cache (qemu_cmd/caps_cache.h) is keyed by canonical path + size + mtime; `kvm` is
// re-decided against this host's /dev/kvm on every call, cached or not.
QemuCaps ProbeCaps(const std::string& binary, const ProbeOptions& opts = {});

}  // namespace qlaunch::qemu
