#include "common/byte_size.h"

#include <gtest/gtest.h>

namespace qlaunch {
namespace {

TEST(ByteSize, ParsesLibvirtUnits) {
  EXPECT_EQ(ParseByteSize("4096"), 4096u);
  EXPECT_EQ(ParseByteSize("4K"), 4096u);
  EXPECT_EQ(ParseByteSize("4k"), 4096u);
  EXPECT_EQ(ParseByteSize("2M"), 2u << 20);
  EXPECT_EQ(ParseByteSize("512M"), 512ull << 20);
  EXPECT_EQ(ParseByteSize("8G"), 8ull << 30);
  EXPECT_EQ(ParseByteSize("1GiB"), 1ull << 30);
  EXPECT_EQ(ParseByteSize("1 GiB"), 1ull << 30);
  EXPECT_EQ(ParseByteSize("2MB"), 2'000'000u);
  EXPECT_EQ(ParseByteSize("1T"), 1ull << 40);
  EXPECT_EQ(ParseByteSize("1.5G"), 3ull << 29);
  EXPECT_EQ(ParseByteSize("100b"), 100u);
  EXPECT_EQ(ParseByteSize("512m"), 512ull << 20);  // libvirt's units are case-insensitive
  EXPECT_EQ(ParseByteSize("1gb"), 1'000'000'000u);
  EXPECT_EQ(ParseByteSize("1P"), 1ull << 50);
}

TEST(ByteSize, UnitScale) {
  EXPECT_EQ(UnitScale("bytes"), 1u);
  EXPECT_EQ(UnitScale("Byte"), 1u);
  EXPECT_EQ(UnitScale("GB"), 1000000000u);
  EXPECT_EQ(UnitScale("G"), 1ull << 30);
  EXPECT_EQ(UnitScale("gib"), 1ull << 30);
  EXPECT_EQ(UnitScale("EB"), 1000000000000000000u);
  EXPECT_EQ(UnitScale("E"), 1ull << 60);
  EXPECT_EQ(UnitScale(""), std::nullopt);
  EXPECT_EQ(UnitScale("x"), std::nullopt);
  EXPECT_EQ(UnitScale("Gi"), std::nullopt);
  EXPECT_EQ(UnitScale("KiBB"), std::nullopt);
}

TEST(ByteSize, RejectsGarbage) {
  for (const char* bad : {"", "G", "-1G", "1X", "1.G", "0.3b", "1e3", "99999999999999999999",
                          "20000000T"})
    EXPECT_EQ(ParseByteSize(bad), std::nullopt) << bad;
}

TEST(ByteSize, Formats) {
  EXPECT_EQ(FormatPageSize(4096), "4 KiB");
  EXPECT_EQ(FormatPageSize(2 << 20), "2 MiB");
  EXPECT_EQ(FormatPageSize(1 << 30), "1 GiB");
  EXPECT_EQ(FormatPageSize(1000), "1000 B");
  EXPECT_EQ(FormatBytes(100), "100 B");
  EXPECT_EQ(FormatBytes(3ull << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(512ull << 20), "512.0 MiB");
}

}  // namespace
}  // namespace qlaunch
