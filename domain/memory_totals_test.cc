#include "domain/memory_totals.h"

#include <gtest/gtest.h>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

TEST(MemoryTotals, WithoutCellsMemoryIsTotal) {
  DomainDef def = ParseDomainXml(testing::Doc(""), "t.xml");
  EXPECT_EQ(NumaCellsMemoryBytes(def), 0u);
  EXPECT_EQ(InitialMemoryBytes(def), 4 * kGiB);
  EXPECT_EQ(TotalMemoryBytes(def), 4 * kGiB);
}

TEST(MemoryTotals, WithCellsTheCellsWin) {
  DomainDef def = ParseDomainXml(
      testing::Doc("<maxMemory slots='2' unit='GiB'>32</maxMemory><cpu><numa>"
                   "<cell cpus='0-1' memory='1' unit='GiB'/><cell cpus='2-3' memory='2' unit='GiB'/></numa></cpu>"
                   "<devices><memory model='dimm'><target><size unit='GiB'>5</size></target></memory></devices>"),
      "t.xml");
  EXPECT_EQ(def.memory_bytes, 4 * kGiB);  // as written
  EXPECT_EQ(NumaCellsMemoryBytes(def), 3 * kGiB);
  EXPECT_EQ(MemoryDevicesBytes(def), 5 * kGiB);
  EXPECT_EQ(InitialMemoryBytes(def), 3 * kGiB);
  EXPECT_EQ(TotalMemoryBytes(def), 8 * kGiB);
}

TEST(MemoryTotals, DevicesComeOutOfMemoryWithoutCells) {
  DomainDef def;
  def.memory_bytes = 4 * kGiB;
  MemoryDevice dimm;
  dimm.size_bytes = kGiB;
  def.devices.memory.push_back(dimm);
  EXPECT_EQ(InitialMemoryBytes(def), 3 * kGiB);
  dimm.size_bytes = 8 * kGiB;
  def.devices.memory.push_back(dimm);
  EXPECT_EQ(InitialMemoryBytes(def), 0u);
}

TEST(MemoryTotals, SumsSaturateInsteadOfWrapping) {
  // Four cells of 4 PiB + 1 GiB: the exact sum is 2^64 + 4 GiB, which used to wrap to 4 GiB.
  DomainDef def;
  NumaCell cell;
  cell.memory_bytes = (1ull << 62) + kGiB;
  for (int i = 0; i < 4; ++i) def.cpu.cells.push_back(cell);
  EXPECT_EQ(NumaCellsMemoryBytes(def), UINT64_MAX);
  EXPECT_EQ(TotalMemoryBytes(def), UINT64_MAX);
  MemoryDevice dimm;
  dimm.size_bytes = kMaxMemoryBytes;
  def.devices.memory = {dimm, dimm, dimm};
  EXPECT_EQ(MemoryDevicesBytes(def), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd(UINT64_MAX - 1, 1), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd(UINT64_MAX - 1, 2), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd(3, 4), 7u);
}

}  // namespace
}  // namespace qlaunch::domain
