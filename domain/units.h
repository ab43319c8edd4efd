// Memory sizes with libvirt units (virScaleInteger + virDomainParseMemory semantics, libvirt 9.0):
// b/byte/bytes = 1; k, KiB, KB ... case-insensitive: a bare letter or "<letter>iB" is a power of
// 1024, "<letter>B" a power of 1000; letters k m g t p e. Results are rounded up to whole KiB and
// must stay below 2^63 bytes. ParseMemorySize() (parser.h) is the optional<> face of this.
// The unit table itself is common/byte_size.h (UnitScale).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace qlaunch::domain {

enum class SizeError { kNone, kBadNumber, kUnknownUnit, kTooLarge };

struct SizeResult {
  uint64_t bytes = 0;
  SizeError error = SizeError::kNone;
};

SizeResult ParseMemorySizeDetailed(std::string_view number, std::string_view unit,
                                   std::string_view default_unit = "KiB");

// A non-negative decimal integer (surrounding blanks allowed); nullopt for anything else.
std::optional<uint64_t> ParseDecimal(std::string_view text);

}  // namespace qlaunch::domain
