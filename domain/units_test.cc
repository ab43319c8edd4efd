#include <gtest/gtest.h>

#include <optional>

#include "domain/parser.h"
#include "domain/units.h"

namespace qlaunch::domain {
namespace {

constexpr uint64_t kKiB = 1024, kMiB = kKiB << 10, kGiB = kMiB << 10, kTiB = kGiB << 10;

struct UnitCase {
  const char* number;
  const char* unit;
  std::optional<uint64_t> bytes;
};

// libvirt: powers of 1024 for k/M/G/T, KiB.., powers of 1000 for KB/MB/GB/TB; rounded up to KiB.
const UnitCase kUnitCases[] = {
    {"1", "b", kKiB},  // 1 byte rounds up to one KiB
    {"1024", "b", kKiB},
    {"1025", "bytes", 2 * kKiB},
    {"4096", "bytes", 4 * kKiB},
    {"1", "KB", kKiB},                  // 1000 bytes -> 1 KiB
    {"1000", "KB", 977 * kKiB},         // 1,000,000 bytes -> 976.56 KiB -> 977 KiB
    {"1", "k", kKiB},
    {"1", "KiB", kKiB},
    {"1", "MB", 977 * kKiB},
    {"1", "M", kMiB},
    {"3", "MiB", 3 * kMiB},
    {"1", "GB", 976563 * kKiB},        // 10^9 bytes
    {"1", "G", kGiB},
    {"2", "GiB", 2 * kGiB},
    {"1", "TB", 1000000000000ull},     // 10^12 is a whole number of KiB
    {"1", "T", kTiB},
    {"1", "TiB", kTiB},
    {"1", "", kKiB},                    // default unit KiB
    {"0", "", 0},
    {" 12\n", "KiB", 12 * kKiB},       // blanks around the number are accepted
    {"1", "kib", kKiB},                 // libvirt compares units case-insensitively
    {"1", "mb", 977 * kKiB},
    {"1", "PiB", kTiB << 10},
    {"9007199254740991", "KiB", 9007199254740991ull * kKiB},  // largest libvirt accepts
    // Rejected:
    {"9007199254740992", "KiB", std::nullopt},  // 2^63 bytes
    {"9223372036854775807", "b", std::nullopt},  // 2^53 KiB after rounding: libvirt "size value too large"
    {"18446744073709551616", "b", std::nullopt},  // does not fit 64 bits
    {"8", "EiB", std::nullopt},
    {"-1", "KiB", std::nullopt},
    {"+1", "KiB", std::nullopt},
    {"1.5", "GiB", std::nullopt},
    {"0x10", "KiB", std::nullopt},
    {"12abc", "KiB", std::nullopt},
    {"1 2", "KiB", std::nullopt},
    {"", "KiB", std::nullopt},
    {"abc", "", std::nullopt},
    {"1", "XB", std::nullopt},
    {"1", "KBB", std::nullopt},
    {"1", "KiBs", std::nullopt},
    {"1", "i", std::nullopt},
    {"1", "Ki", std::nullopt},
};

TEST(Units, ParseMemorySizeTable) {
  for (const UnitCase& c : kUnitCases)
    EXPECT_EQ(ParseMemorySize(c.number, c.unit), c.bytes) << "'" << c.number << "' '" << c.unit << "'";
}

TEST(Units, DefaultUnitIsUsedOnlyWithoutUnit) {
  EXPECT_EQ(ParseMemorySize("2", "", "MiB"), 2 * kMiB);
  EXPECT_EQ(ParseMemorySize("2", "KiB", "MiB"), 2 * kKiB);
  EXPECT_EQ(ParseMemorySize("2", "", "bogus"), std::nullopt);
}

TEST(Units, DetailedErrorsTellWhatIsWrong) {
  EXPECT_EQ(ParseMemorySizeDetailed("x", "KiB").error, SizeError::kBadNumber);
  EXPECT_EQ(ParseMemorySizeDetailed("1", "Qi").error, SizeError::kUnknownUnit);
  EXPECT_EQ(ParseMemorySizeDetailed("99999999999999", "TiB").error, SizeError::kTooLarge);
  EXPECT_EQ(ParseMemorySizeDetailed("5", "MiB").bytes, 5 * kMiB);
}

}  // namespace
}  // namespace qlaunch::domain
