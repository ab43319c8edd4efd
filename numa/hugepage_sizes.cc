#include "numa/hugepage_sizes.h"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "numa/sysfs_files.h"

namespace qlaunch::numa {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kTwoMiB = 2ull << 20;

std::optional<uint64_t> ParseKiB(std::string_view digits) {
  uint64_t kib = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), kib);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || kib == 0 ||
      kib > (UINT64_MAX >> 10))
    return std::nullopt;
  return kib << 10;
}

}  // namespace

std::optional<uint64_t> ParseHugepageDirName(std::string_view name) {
  constexpr std::string_view kPrefix = "hugepages-", kSuffix = "kB";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix))
    return std::nullopt;
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(kSuffix.size());
  return ParseKiB(name);
}

std::vector<uint64_t> HugepageSizesIn(const fs::path& dir) {
  std::vector<uint64_t> sizes;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (auto bytes = ParseHugepageDirName(it->path().filename().string())) sizes.push_back(*bytes);
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

std::optional<uint64_t> ParseMeminfoHugepagesize(std::string_view meminfo) {
  constexpr std::string_view kKey = "Hugepagesize:";
  size_t pos = 0;
  while (pos < meminfo.size()) {
    size_t eol = meminfo.find('\n', pos);
    if (eol == std::string_view::npos) eol = meminfo.size();
    std::string_view line = meminfo.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.starts_with(kKey)) continue;
    line.remove_prefix(kKey.size());
    size_t b = line.find_first_not_of(' ');
    if (b == std::string_view::npos) return std::nullopt;
    line.remove_prefix(b);
    if (!line.ends_with(" kB")) return std::nullopt;
    line.remove_suffix(3);
    return ParseKiB(line);
  }
  return std::nullopt;
}

uint64_t ReadDefaultHugepageBytes(const fs::path& root, bool real_sysfs, const std::vector<uint64_t>& sizes) {
  if (real_sysfs) {
    if (auto meminfo = ReadTextFile("/proc/meminfo"))
      if (auto bytes = ParseMeminfoHugepagesize(*meminfo)) return *bytes;
  } else if (auto kib = ReadNumberFile(root / "qlaunch-default-hugepagesize")) {
    return *kib << 10;
  }
  return std::find(sizes.begin(), sizes.end(), kTwoMiB) != sizes.end() ? kTwoMiB : 0;
}

}  // namespace qlaunch::numa
