// The capability cache: one JSON file per QEMU binary, <cache_dir>/caps-<hash of path>.json,
// holding the key it was probed under (canonical path, size, mtime in ns) and the caps. A key
// that no longer matches the binary on disk means the file is stale and the binary is reprobed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "qemu_cmd/caps.h"

namespace qlaunch::qemu {

struct CapsCacheKey {
  std::string path;  // canonical (symlinks resolved)
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
  friend bool operator==(const CapsCacheKey&, const CapsCacheKey&) = default;
};

// What the cache stores: the probed caps plus the one host-independent fact behind `kvm`
// (QEMU was built with KVM), so `kvm` can be re-decided against this host's /dev/kvm on load.
struct CachedCaps {
  QemuCaps caps;
  bool kvm_compiled = false;
};

// The key of `binary` as it is on disk now; std::nullopt when it cannot be stat'ed.
std::optional<CapsCacheKey> MakeCapsCacheKey(const std::string& binary);

// $QLAUNCH_CACHE_DIR, else $XDG_CACHE_HOME/qlaunch, else ~/.cache/qlaunch; empty when there is
// no home directory to use.
std::filesystem::path DefaultCapsCacheDir();

std::filesystem::path CapsCacheFile(const std::filesystem::path& cache_dir, const CapsCacheKey& key);

// The cached entry when the file exists, parses and was written under exactly `key`.
std::optional<CachedCaps> LoadCachedCaps(const std::filesystem::path& cache_dir, const CapsCacheKey& key);

// Writes atomically (temporary file + rename). Best effort: returns false (and leaves nothing
// behind) when the directory cannot be created or written.
bool StoreCachedCaps(const std::filesystem::path& cache_dir, const CapsCacheKey& key, const CachedCaps& entry);

}  // namespace qlaunch::qemu
