// Huge page sizes: the hugepages-<N>kB directory names, and which size is the default.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace qlaunch::numa {

// "hugepages-2048kB" -> 2097152 (bytes); std::nullopt for any other name.
std::optional<uint64_t> ParseHugepageDirName(std::string_view name);

// Sizes (bytes, ascending) of the hugepages-<N>kB entries of dir; empty when dir is absent.
std::vector<uint64_t> HugepageSizesIn(const std::filesystem::path& dir);

// The "Hugepagesize:    2048 kB" line of /proc/meminfo, in bytes.
std::optional<uint64_t> ParseMeminfoHugepagesize(std::string_view meminfo);

// Default huge page size in bytes, 0 when unknown. For the real /sys: /proc/meminfo. Otherwise
// <root>/qlaunch-default-hugepagesize (a plain kB number) when present. Failing both, 2 MiB when
// that size is among `sizes`.
uint64_t ReadDefaultHugepageBytes(const std::filesystem::path& root, bool real_sysfs,
                                  const std::vector<uint64_t>& sizes);

}  // namespace qlaunch::numa
