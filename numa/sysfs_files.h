// Reading single sysfs-style files: whole text, one number, one kernel id list.
// Absent files are std::nullopt (the caller decides what "unknown" means); files that exist but
// cannot be read or parsed throw std::runtime_error naming the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/id_set.h"

namespace qlaunch::numa {

std::optional<std::string> ReadTextFile(const std::filesystem::path& path);

// One unsigned decimal number, surrounding blanks and newline allowed ("512\n").
std::optional<uint64_t> ReadNumberFile(const std::filesystem::path& path);

// A kernel cpulist/nodelist ("0-3,8\n"); a blank file is the empty set.
std::optional<IdSet> ReadIdListFile(const std::filesystem::path& path);

// True when root is the live kernel's sysfs ("/sys", "/sys/", or a path resolving to it).
bool IsRealSysfs(const std::filesystem::path& root);

}  // namespace qlaunch::numa
