// hugetlbfs mount points by page size, from text in /proc/mounts format.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace qlaunch::numa {

// A pagesize= mount option as the kernel parses it (memparse): "2M", "1024M", "1G", "2048K",
// plain bytes. std::nullopt when malformed or zero.
std::optional<uint64_t> ParsePageSizeOption(std::string_view value);

// The hugetlbfs lines of `mounts` ("dev dir type opts freq passno", octal escapes such as \040 in
// the mount point): page size in bytes -> mount point. A mount without pagesize= has the default
// size (skipped when default_page_bytes is 0). When one size is mounted twice the first line wins.
std::map<uint64_t, std::string> ParseHugetlbfsMounts(std::string_view mounts, uint64_t default_page_bytes);

}  // namespace qlaunch::numa
