#include "common/byte_size.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <limits>

namespace qlaunch {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::optional<unsigned> PowerOfLetter(char letter) {
  switch (std::tolower(static_cast<unsigned char>(letter))) {
    case 'k': return 1;
    case 'm': return 2;
    case 'g': return 3;
    case 't': return 4;
    case 'p': return 5;
    case 'e': return 6;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<uint64_t> UnitScale(std::string_view unit) {
  if (EqualsIgnoreCase(unit, "b") || EqualsIgnoreCase(unit, "byte") || EqualsIgnoreCase(unit, "bytes")) return 1;
  if (unit.empty()) return std::nullopt;
  uint64_t base;
  std::string_view rest = unit.substr(1);
  if (rest.empty() || EqualsIgnoreCase(rest, "iB"))
    base = 1024;
  else if (EqualsIgnoreCase(rest, "B"))
    base = 1000;
  else
    return std::nullopt;
  std::optional<unsigned> power = PowerOfLetter(unit.front());
  if (!power) return std::nullopt;
  uint64_t scale = 1;
  for (unsigned i = 0; i < *power; ++i) scale *= base;
  return scale;
}

std::optional<uint64_t> ParseByteSize(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);

  // Integer part, then an optional fraction ("1.5G"), then the unit.
  size_t i = 0;
  uint64_t whole = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    unsigned digit = text[i] - '0';
    if (whole > (kMax - digit) / 10) return std::nullopt;
    whole = whole * 10 + digit;
    ++i;
  }
  if (i == 0) return std::nullopt;
  uint64_t frac_num = 0, frac_den = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (frac_den >= 1'000'000'000'000ull) return std::nullopt;  // enough precision
      frac_num = frac_num * 10 + (text[i] - '0');
      frac_den *= 10;
      ++i;
    }
    if (i == start) return std::nullopt;
  }
  std::string_view unit = text.substr(i);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.remove_prefix(1);
  std::optional<uint64_t> factor = unit.empty() ? std::optional<uint64_t>(1) : UnitScale(unit);
  if (!factor) return std::nullopt;

  if (whole > kMax / *factor) return std::nullopt;
  uint64_t bytes = whole * *factor;
  if (frac_num != 0) {
    // frac_num / frac_den * factor must be a whole number of bytes.
    unsigned __int128 scaled = static_cast<unsigned __int128>(frac_num) * *factor;
    if (scaled % frac_den != 0) return std::nullopt;
    uint64_t extra = static_cast<uint64_t>(scaled / frac_den);
    if (bytes > kMax - extra) return std::nullopt;
    bytes += extra;
  }
  return bytes;
}

std::string FormatPageSize(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (unit + 1 < kNames.size() && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kNames[unit];
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (unit + 1 < kNames.size() && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", value, kNames[unit]);
  return buf;
}

}  // namespace qlaunch
