// PlanVirtioMemResize: which virtio-mem device, libvirt's checks, the qom-set.
#include "qemu_cmd/virtio_mem_resize_plan.h"

#include <gtest/gtest.h>

namespace qlaunch::qemu {
namespace {

constexpr uint64_t MiB = 1ull << 20;

domain::MemoryDevice Mem(std::string model, unsigned node, uint64_t size, uint64_t block = 0, uint64_t requested = 0) {
  domain::MemoryDevice m;
  m.model = std::move(model);
  m.node = node;
  m.size_bytes = size;
  if (block) m.block_bytes = block;
  if (requested) m.requested_bytes = requested;
  return m;
}

// A DIMM, then virtio-mem devices on nodes 0 (512 MiB, 2 MiB blocks, 128 plugged) and 1
// (1 GiB + 1 MiB rounded up to 4 MiB blocks).
domain::DomainDef Running() {
  domain::DomainDef d;
  d.devices.memory = {Mem("dimm", 0, 256 * MiB), Mem("virtio-mem", 0, 512 * MiB, 2 * MiB, 128 * MiB),
                      Mem("virtio-mem", 1, 1025 * MiB, 4 * MiB)};
  return d;
}

std::string Error(const domain::DomainDef& d, const VirtioMemSelector& s, uint64_t requested) {
  try {
    PlanVirtioMemResize(d, s, requested);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "<planned>";
}

TEST(VirtioMemResizePlan, ByAliasOrNode) {
  const VirtioMemResize a = PlanVirtioMemResize(Running(), {"virtiomem1", std::nullopt}, 256 * MiB);
  EXPECT_EQ(a.index, 2u);
  EXPECT_EQ(a.memdev, "memvirtiomem1");
  EXPECT_EQ(a.size_bytes, 1028 * MiB);
  EXPECT_EQ(a.old_requested, 0u);
  EXPECT_EQ(a.new_requested, 256 * MiB);
  EXPECT_EQ(a.command.execute, "qom-set");
  EXPECT_EQ(a.command.arguments.dump(),
            R"({"path":"/machine/peripheral/virtiomem1","property":"requested-size","value":268435456})");
  const VirtioMemResize b = PlanVirtioMemResize(Running(), {"", 0u}, 0);
  EXPECT_EQ(b.alias, "virtiomem0");
  EXPECT_EQ(b.old_requested, 128 * MiB);
  // The whole device, rounded up to its blocks as at start.
  EXPECT_EQ(PlanVirtioMemResize(Running(), {"virtiomem1", 1u}, 1028 * MiB).new_requested, 1028 * MiB);
}

// The aliases plan.json recorded win over the rank: a device attached as virtiomem4 is found
// and set under that name.
TEST(VirtioMemResizePlan, TheRecordedAliasesNameTheDevices) {
  const std::vector<std::string> recorded = {"virtiomem0", "virtiomem4"};
  const VirtioMemResize r = PlanVirtioMemResize(Running(), {"virtiomem4", std::nullopt}, 8 * MiB, recorded);
  EXPECT_EQ(r.index, 2u);
  EXPECT_EQ(r.memdev, "memvirtiomem4");
  EXPECT_EQ(r.command.arguments.value("path", ""), "/machine/peripheral/virtiomem4");
  EXPECT_THROW(PlanVirtioMemResize(Running(), {"virtiomem1", std::nullopt}, 8 * MiB, recorded), std::runtime_error);
}

TEST(VirtioMemResizePlan, Refusals) {
  struct Row {
    VirtioMemSelector which;
    uint64_t requested;
    std::string error;
  };
  for (const Row& row : std::vector<Row>{
           {{"", std::nullopt}, 0, "multiple memory devices found: give --alias or --node (virtiomem0 (node 0), virtiomem1 (node 1))"},
           {{"dimm0", std::nullopt}, 0, "no memory device found with alias 'dimm0' (the domain's virtio-mem devices: "},
           {{"virtiomem0", 1u}, 0, "no memory device found with alias 'virtiomem0' on guest node 1"},
           {{"virtiomem0", std::nullopt}, 513 * MiB, "requested size must be smaller than or equal to @size (524288KiB)"},
           {{"virtiomem1", std::nullopt}, 2 * MiB, "requested size must be an integer multiple of block size (4096KiB)"},
       }) {
    SCOPED_TRACE(row.error);
    EXPECT_NE(Error(Running(), row.which, row.requested).find(row.error), std::string::npos)
        << Error(Running(), row.which, row.requested);
  }
  domain::DomainDef none;
  none.devices.memory = {Mem("dimm", 0, 256 * MiB)};
  EXPECT_EQ(Error(none, {}, 0), "no memory device found: the domain has no <memory model='virtio-mem'>");
}

}  // namespace
}  // namespace qlaunch::qemu
