#include "domain/units.h"

#include <cctype>
#include <charconv>
#include <limits>

#include "domain/parser.h"
#include "domain/xml_node.h"

namespace qlaunch::domain {

namespace {

constexpr uint64_t kMaxBytes = std::numeric_limits<int64_t>::max();  // libvirt: LLONG_MAX
constexpr uint64_t kKiB = 1024;

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

std::optional<uint64_t> ParseDecimal(std::string_view text) {
  text = TrimSpace(text);
  if (text.empty()) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

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

SizeResult ParseMemorySizeDetailed(std::string_view number, std::string_view unit,
                                   std::string_view default_unit) {
  std::optional<uint64_t> value = ParseDecimal(number);
  if (!value) return {0, SizeError::kBadNumber};
  std::optional<uint64_t> scale = UnitScale(unit.empty() ? default_unit : unit);
  if (!scale) return {0, SizeError::kUnknownUnit};
  if (*value > kMaxBytes / *scale) return {0, SizeError::kTooLarge};
  uint64_t kib = (*value * *scale + kKiB - 1) / kKiB;
  if (kib >= (kMaxBytes + kKiB - 1) / kKiB) return {0, SizeError::kTooLarge};  // libvirt: "size value too large"
  return {kib * kKiB, SizeError::kNone};
}

std::optional<uint64_t> ParseMemorySize(std::string_view number, std::string_view unit,
                                        std::string_view default_unit) {
  SizeResult result = ParseMemorySizeDetailed(number, unit, default_unit);
  if (result.error != SizeError::kNone) return std::nullopt;
  return result.bytes;
}

}  // namespace qlaunch::domain
