// virtio-mem at start: the backend (reserve off, no prealloc), the virtio-mem-pci device (block,
// requested size, prealloc moved to the device), its PCI placement, the pre-flight's page count
// (what is plugged), and what an older QEMU gets. libvirt 9.0's argv for the same XML is the
// reference (tests/fixtures/differential/virtio-mem.xml compares them under both).
#include <gtest/gtest.h>

#include <algorithm>

#include "qemu_cmd/planner.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using namespace qlaunch::testing;

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

domain::MemoryDevice VirtioMem(uint64_t size, uint64_t block, std::optional<uint64_t> requested, int line) {
  domain::MemoryDevice m;
  m.model = "virtio-mem";
  m.size_bytes = size;
  m.node = 0;
  m.block_bytes = block;
  m.requested_bytes = requested;
  m.line = line;
  return m;
}

// q35, one 1 GiB cell, <maxMemory slots='16'>16 GiB: a plain virtio-mem device, one on 2 MiB
// pages bound to host node 1, and a DIMM.
domain::DomainDef Domain() {
  domain::DomainDef d = MakeDomain("vm1", 5 * GiB);
  d.type = "qemu";  // TCG: no note about KVM on hosts without it
  d.os.machine = "pc-q35-7.2";
  d.max_memory_bytes = 16 * GiB;
  d.max_memory_slots = 16;
  SetCells(d, {Cell(0, IdSet{0, 1}, GiB)});
  d.devices.memory.push_back(VirtioMem(GiB, 2 * MiB, 512 * MiB, 20));
  domain::MemoryDevice huge = VirtioMem(2 * GiB, 2 * MiB, GiB, 21);
  huge.source_pagesize_bytes = 2 * MiB;
  huge.source_nodemask = IdSet{1};
  d.devices.memory.push_back(huge);
  domain::MemoryDevice dimm;
  dimm.model = "dimm";
  dimm.size_bytes = 256 * MiB;
  dimm.node = 0;
  dimm.line = 22;
  d.devices.memory.push_back(dimm);
  return d;
}

LaunchPlan Plan(const domain::DomainDef& d, const QemuCaps& caps = Caps72()) {
  return PlanLaunch(d, TwoNodeHost(), caps, PlanOptions{});
}

// The value after each `opt` in the argv, in order.
std::vector<std::string> Values(const LaunchPlan& p, const std::string& opt) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < p.argv.size(); ++i)
    if (p.argv[i] == opt) out.push_back(p.argv[i + 1]);
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(VirtioMemPlan, RendersLikeLibvirt90) {
  LaunchPlan p = Plan(Domain());
  const auto objects = Values(p, "-object");
  const auto devices = Values(p, "-device");
  EXPECT_TRUE(Has(objects, R"({"qom-type":"memory-backend-ram","id":"memvirtiomem0","reserve":false,"size":1073741824})"));
  EXPECT_TRUE(Has(objects, R"({"qom-type":"memory-backend-file","id":"memvirtiomem1","mem-path":"/dev/hugepages/qlaunch/vm1",)"
                           R"("reserve":false,"size":2147483648,"host-nodes":[1],"policy":"bind"})"))
      << ::testing::PrintToString(objects);
  // The DIMM keeps slot 0: virtio-mem takes no memory slot.
  EXPECT_TRUE(Has(devices, "pc-dimm,node=0,memdev=memdimm0,id=dimm0,slot=0")) << ::testing::PrintToString(devices);
  auto device = [&](const std::string& id) {
    for (const std::string& d : devices)
      if (d.find("id=" + id + ",") != std::string::npos) return d;
    return std::string("<absent>");
  };
  const std::string vm0 = device("virtiomem0"), vm1 = device("virtiomem1");
  EXPECT_EQ(vm0.substr(0, vm0.find(",bus=")),
            "virtio-mem-pci,id=virtiomem0,node=0,block-size=2097152,requested-size=536870912,memdev=memvirtiomem0");
  // Huge pages are preallocated as libvirt does it for virtio-mem: by the device, for what it plugs.
  EXPECT_EQ(vm1.substr(0, vm1.find(",bus=")), "virtio-mem-pci,id=virtiomem1,node=0,block-size=2097152,"
                                              "requested-size=1073741824,memdev=memvirtiomem1,prealloc=on");
  EXPECT_NE(vm0.find(",bus=pci."), std::string::npos) << "a PCI Express device on q35 sits behind a root port";
  for (const MemoryBackend& b : p.backends) {
    if (!b.virtio_mem) continue;
    EXPECT_EQ(b.prealloc, PreallocBy::kNone) << b.id << ": neither QEMU's backend nor qlaunch fills it";
    EXPECT_TRUE(b.thread_context.empty()) << b.id;
  }
  EXPECT_TRUE(p.notes.empty()) << p.notes.front().ToString();
}

TEST(VirtioMemPlan, ThePreflightCountsThePluggedPagesOnly) {
  LaunchPlan p = Plan(Domain());
  ASSERT_EQ(p.pool_needs.size(), 1u);
  EXPECT_EQ(p.pool_needs[0].node, 1);
  EXPECT_EQ(p.pool_needs[0].page_bytes, 2 * MiB);
  EXPECT_EQ(p.pool_needs[0].pages, 512u) << "1 GiB requested of a 2 GiB device";
}

TEST(VirtioMemPlan, SizeIsRoundedUpToWholeBlocksAndZeroRequestedIsLeftOut) {
  domain::DomainDef d = Domain();
  d.devices.memory = {VirtioMem(GiB + MiB, 4 * MiB, 0, 20)};
  LaunchPlan p = Plan(d);
  ASSERT_EQ(p.backends.size(), 2u);
  EXPECT_EQ(p.backends[1].size_bytes, GiB + 4 * MiB);
  for (const std::string& dev : Values(p, "-device"))
    if (dev.starts_with("virtio-mem-pci")) {
      EXPECT_EQ(dev.find("requested-size"), std::string::npos) << dev;
    }
}

TEST(VirtioMemPlan, FollowsTheVirtioInputsOnPci) {
  domain::DomainDef d = Domain();
  domain::Input tablet;
  tablet.type = "tablet";
  tablet.bus = "virtio";
  d.devices.inputs.push_back(tablet);
  LaunchPlan p = Plan(d);
  std::optional<PciSlot> input, mem;
  for (const DeviceRecord& r : p.devices) {
    if (r.driver == "virtio-tablet-pci") input = r.slot;
    if (r.id == "virtiomem0") mem = r.slot;
  }
  ASSERT_TRUE(input && mem);
  EXPECT_LT(input->bus, mem->bus) << "libvirt places virtio-mem after the virtio inputs";
  EXPECT_EQ(mem->bus.size(), input->bus.size());
}

TEST(VirtioMemPlan, QemuWithoutReserveOrDevicePreallocGetsTheBackendAloneAndANote) {
  LaunchPlan p = Plan(Domain(), Caps52());
  for (const std::string& o : Values(p, "-object"))
    EXPECT_EQ(o.find("reserve"), std::string::npos) << o;
  for (const std::string& dev : Values(p, "-device"))
    if (dev.starts_with("virtio-mem-pci")) {
      EXPECT_EQ(dev.find("prealloc"), std::string::npos) << dev;
    }
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0].line, 21);
  EXPECT_NE(p.notes[0].message.find("cannot preallocate what it plugs"), std::string::npos);
}

TEST(VirtioMemPlan, QemuWithoutVirtioMemIsAnErrorAtTheElement) {
  QemuCaps caps = Caps72();
  caps.virtio_mem = false;
  try {
    Plan(Domain(), caps);
    FAIL() << "planned";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().at(0).line, 20);
    EXPECT_EQ(e.diagnostics().at(0).element, "memory");
    EXPECT_NE(std::string(e.what()).find("no virtio-mem-pci"), std::string::npos);
  }
}

}  // namespace
}  // namespace qlaunch::qemu
