#include "numa/hugetlbfs_mounts.h"

#include <cctype>
#include <charconv>
#include <sstream>
#include <system_error>
#include <vector>

namespace qlaunch::numa {

namespace {

// /proc/mounts escapes space, tab, newline and backslash in paths as \ooo.
std::string UnescapeMountField(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      auto oct = [](char c) { return c >= '0' && c <= '7'; };
      if (oct(field[i + 1]) && oct(field[i + 2]) && oct(field[i + 3])) {
        out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(sep, pos);
    parts.push_back(s.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) return parts;
    pos = next + 1;
  }
}

}  // namespace

std::optional<uint64_t> ParsePageSizeOption(std::string_view value) {
  uint64_t number = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ptr == value.data() || ec != std::errc()) return std::nullopt;
  std::string_view suffix(ptr, value.data() + value.size() - ptr);
  unsigned shift = 0;
  if (suffix.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return std::nullopt;
    }
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (number == 0 || number > (UINT64_MAX >> shift)) return std::nullopt;
  return number << shift;
}

std::map<uint64_t, std::string> ParseHugetlbfsMounts(std::string_view mounts, uint64_t default_page_bytes) {
  std::map<uint64_t, std::string> result;
  std::istringstream in{std::string(mounts)};
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string device, dir, type, options;
    if (!(fields >> device >> dir >> type >> options) || type != "hugetlbfs") continue;
    std::optional<uint64_t> page_bytes;
    bool has_pagesize = false;
    for (std::string_view opt : Split(options, ',')) {
      if (opt.starts_with("pagesize=")) {
        has_pagesize = true;
        page_bytes = ParsePageSizeOption(opt.substr(9));
      }
    }
    if (!has_pagesize && default_page_bytes != 0) page_bytes = default_page_bytes;
    if (page_bytes) result.emplace(*page_bytes, UnescapeMountField(dir));
  }
  return result;
}

}  // namespace qlaunch::numa
