#include "domain/units.h"

#include <charconv>
#include <limits>

#include "common/byte_size.h"
#include "domain/parser.h"
#include "domain/xml_node.h"

namespace qlaunch::domain {

namespace {

constexpr uint64_t kMaxBytes = std::numeric_limits<int64_t>::max();  // libvirt: LLONG_MAX
constexpr uint64_t kKiB = 1024;

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
