#include "launcher/bench/bench_floor.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {
namespace {

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

domain::DomainDef TwoCells() {
  domain::DomainDef def;
  def.name = "vm";
  def.memory_bytes = 10 * kGiB;
  def.current_memory_bytes = 10 * kGiB;
  def.vcpu.count = 4;
  def.cpu.cells.resize(2);
  def.cpu.cells[0].memory_bytes = def.cpu.cells[1].memory_bytes = 4 * kGiB;
  def.devices.memory.resize(1);
  def.devices.memory[0].size_bytes = 2 * kGiB;
  def.memory_backing.hugepages = true;
  return def;
}

TEST(BenchFloor, EveryCellKeepsOnePageAndMemoryDevicesGo) {
  const domain::DomainDef floor = FloorDomain(TwoCells());
  ASSERT_EQ(floor.cpu.cells.size(), 2u);
  EXPECT_EQ(floor.cpu.cells[0].memory_bytes, 2 * kMiB);
  EXPECT_EQ(floor.cpu.cells[1].memory_bytes, 2 * kMiB);
  EXPECT_TRUE(floor.devices.memory.empty());
  EXPECT_EQ(floor.memory_bytes, 4 * kMiB);
  EXPECT_EQ(floor.current_memory_bytes, 4 * kMiB);
  // The rest of the domain stays as it was.
  EXPECT_EQ(floor.name, "vm");
  EXPECT_EQ(floor.vcpu.count, 4u);
  EXPECT_TRUE(floor.memory_backing.hugepages);
}

TEST(BenchFloor, TheLargestPageSizeIsTheMinimum) {
  domain::DomainDef def = TwoCells();
  def.memory_backing.pages.push_back({1 * kGiB, std::nullopt, 0});
  def.memory_backing.pages.push_back({2 * kMiB, std::nullopt, 0});
  const domain::DomainDef floor = FloorDomain(def);
  EXPECT_EQ(floor.cpu.cells[0].memory_bytes, 1 * kGiB);
  EXPECT_EQ(floor.memory_bytes, 2 * kGiB);
}

TEST(BenchFloor, ADomainWithoutCellsKeepsOnePage) {
  domain::DomainDef def;
  def.memory_bytes = 8 * kGiB;
  const domain::DomainDef floor = FloorDomain(def);
  EXPECT_EQ(floor.memory_bytes, 2 * kMiB);
  EXPECT_FALSE(floor.current_memory_bytes.has_value());
}

TEST(BenchFloor, TheSizedFloorKeepsEverySizeAndPreallocatesNothing) {
  domain::DomainDef def = TwoCells();
  def.memory_backing.allocation = domain::AllocMode::kImmediate;
  def.memory_backing.threads = 4;
  const domain::DomainDef sized = SizedFloorDomain(def);
  EXPECT_EQ(sized.memory_backing.allocation, domain::AllocMode::kOnDemand);
  EXPECT_FALSE(sized.memory_backing.threads);
  EXPECT_EQ(sized.memory_bytes, 10 * kGiB);
  EXPECT_EQ(sized.cpu.cells[0].memory_bytes, 4 * kGiB);
  ASSERT_EQ(sized.devices.memory.size(), 1u);
  EXPECT_EQ(sized.devices.memory[0].size_bytes, 2 * kGiB);
}

TEST(BenchFloor, WithoutPreallocTurnsEveryMemoryBackendsPreallocOff) {
  const std::vector<std::string> argv = {
      "qemu", "-name", "guest=vm", "-object", R"({"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[0]})",
      "-object",
      R"({"qom-type":"memory-backend-memfd","id":"ram-node0","hugetlb":true,"prealloc":true,"prealloc-threads":2,"prealloc-context":"tc-ram-node0","size":4096})",
      "-numa", "node,nodeid=0,memdev=ram-node0", "-object", R"({"qom-type":"memory-backend-file","id":"ram-node1","size":4096})",
      "-device", R"({"driver":"virtio-balloon-pci","id":"balloon0"})"};
  const std::vector<std::string> out = WithoutPrealloc(argv);
  ASSERT_EQ(out.size(), argv.size());
  const nlohmann::json node0 = nlohmann::json::parse(out[6]), node1 = nlohmann::json::parse(out[10]);
  EXPECT_EQ(node0["prealloc"], false);
  EXPECT_FALSE(node0.contains("prealloc-threads"));
  EXPECT_FALSE(node0.contains("prealloc-context"));
  EXPECT_EQ(node0["size"], 4096);
  EXPECT_EQ(node0["hugetlb"], true);
  EXPECT_EQ(node1["prealloc"], false);
  for (size_t i : {0u, 1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 11u, 12u}) EXPECT_EQ(out[i], argv[i]) << i;
}

}  // namespace
}  // namespace qlaunch::launcher
