// Over 400 lines for a reason: 23 small cases of one function (PlanMemory: cells, DIMMs, backend
// types, page sizes, prealloc), all on the shared plan fixtures; each is short, there are many.
#include "qemu_cmd/memory_plan.h"

#include <gtest/gtest.h>

#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using domain::AllocMode;
using domain::MemAccess;
using domain::MemSource;
using domain::NumaMode;
using namespace qlaunch::testing;

constexpr uint64_t KiB = 1024;
constexpr uint64_t GiB = 1ull << 30;

MemoryLayout Plan(const domain::DomainDef& d, const numa::HostTopology& h = TwoNodeHost(),
                  const QemuCaps& caps = Caps72(), PlanOptions opts = {}) {
  return PlanMemory(d, h, caps, opts);
}

Diagnostic PlanError(const domain::DomainDef& d, const numa::HostTopology& h = TwoNodeHost(),
                     const QemuCaps& caps = Caps72()) {
  try {
    Plan(d, h, caps);
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "no DiagnosticError";
  return {};
}

TEST(PlanMemory, CellsAreAlignedToOneMiBAndSumToBootMemory) {
  // cpu-numa1: two cells of 109550 KiB -> 112197632 bytes each, -m size=219136k.
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1}, 109550 * KiB), Cell(1, IdSet{2, 3}, 109550 * KiB)});
  auto m = Plan(d);
  ASSERT_EQ(m.backends.size(), 2u);
  EXPECT_EQ(m.backends[0].id, "ram-node0");
  EXPECT_EQ(m.backends[0].size_bytes, 112197632u);
  EXPECT_EQ(m.backends[1].size_bytes, 112197632u);
  EXPECT_EQ(m.initial_bytes, 219136 * KiB);
  EXPECT_FALSE(m.machine_memory_backend);
}

TEST(PlanMemory, CellsComeOutSortedById) {
  auto d = MakeDomain();
  SetCells(d, {Cell(1, IdSet{2, 3}, GiB), Cell(0, IdSet{0, 1}, GiB)});
  auto m = Plan(d);
  ASSERT_EQ(m.backends.size(), 2u);
  EXPECT_EQ(m.backends[0].id, "ram-node0");
  EXPECT_EQ(*m.backends[0].guest_node, 0u);
  EXPECT_EQ(m.backends[1].id, "ram-node1");
}

TEST(PlanMemory, NoCellsGivesPcRamWiredIntoTheMachine) {
  auto d = MakeDomain("vm1", 219100 * KiB);  // mlock-on: pc.ram of 224395264 bytes
  auto m = Plan(d);
  ASSERT_EQ(m.backends.size(), 1u);
  EXPECT_EQ(m.backends[0].id, "pc.ram");
  EXPECT_EQ(m.backends[0].type, BackendType::kRam);
  EXPECT_EQ(m.backends[0].size_bytes, 224395264u);
  EXPECT_FALSE(m.backends[0].guest_node.has_value());
  EXPECT_TRUE(m.machine_memory_backend);
  EXPECT_EQ(m.initial_bytes, 219136 * KiB);
}

TEST(PlanMemory, DimmsAreAlignedToTwoMiBAndLeftOutOfBootMemory) {
  auto d = MakeDomain("vm1", GiB + 524287 * KiB);
  d.max_memory_bytes = 8 * GiB + 100;
  d.max_memory_slots = 16;
  domain::MemoryDevice dimm;
  dimm.model = "dimm";
  dimm.size_bytes = 524287 * KiB;
  dimm.line = 40;
  d.devices.memory.push_back(dimm);
  auto m = Plan(d);
  EXPECT_EQ(m.initial_bytes, GiB);
  ASSERT_EQ(m.backends.size(), 2u);
  EXPECT_EQ(m.backends[1].id, "memdimm0");
  EXPECT_EQ(m.backends[1].size_bytes, 536870912u);
  EXPECT_TRUE(m.backends[1].is_device);
  ASSERT_EQ(m.max_bytes.value_or(0), 8 * GiB + (1 << 20));
  EXPECT_EQ(m.slots, 16u);
}

struct TypeCase {
  const char* name;
  void (*setup)(domain::DomainDef&);
  BackendType type;
  const char* mem_path;
  uint64_t page;
  bool prealloc;
  bool shared;
  std::optional<bool> share_explicit;
};

TEST(PlanMemory, BackendTypeFollowsLibvirt) {
  const TypeCase cases[] = {
      {"default", [](domain::DomainDef&) {}, BackendType::kRam, "", 0, false, false, std::nullopt},
      {"immediate", [](domain::DomainDef& d) { d.memory_backing.allocation = AllocMode::kImmediate; },
       BackendType::kRam, "", 0, true, false, std::nullopt},
      {"hugepages default size", [](domain::DomainDef& d) { SetHugepages(d); }, BackendType::kFile,
       "/dev/hugepages/qlaunch/vm1", kPage2M, true, false, std::nullopt},
      {"hugepages 1G", [](domain::DomainDef& d) { SetHugepages(d, {Page(kPage1G)}); }, BackendType::kFile,
       "/dev/hugepages1G/qlaunch/vm1", kPage1G, true, false, std::nullopt},
      {"4 KiB page is no huge page", [](domain::DomainDef& d) { SetHugepages(d, {Page(4096)}); },
       BackendType::kRam, "", 0, false, false, std::nullopt},
      {"memfd", [](domain::DomainDef& d) { d.memory_backing.source = MemSource::kMemfd; }, BackendType::kMemfd, "",
       0, false, true, std::nullopt},
      {"memfd hugepages",
       [](domain::DomainDef& d) {
         d.memory_backing.source = MemSource::kMemfd;
         SetHugepages(d, {Page(kPage2M)});
       },
       BackendType::kMemfd, "", kPage2M, true, true, std::nullopt},
      {"memfd private",
       [](domain::DomainDef& d) {
         d.memory_backing.source = MemSource::kMemfd;
         d.memory_backing.access = MemAccess::kPrivate;
       },
       BackendType::kMemfd, "", 0, false, false, false},
      {"shared access", [](domain::DomainDef& d) { d.memory_backing.access = MemAccess::kShared; },
       BackendType::kFile, "/run/qlaunch/vm1/ram", 0, false, true, true},
      {"private access", [](domain::DomainDef& d) { d.memory_backing.access = MemAccess::kPrivate; },
       BackendType::kFile, "/run/qlaunch/vm1/ram", 0, false, false, false},
      {"file source", [](domain::DomainDef& d) { d.memory_backing.source = MemSource::kFile; }, BackendType::kFile,
       "/run/qlaunch/vm1/ram", 0, false, false, std::nullopt},
      {"hugepages shared",
       [](domain::DomainDef& d) {
         SetHugepages(d);
         d.memory_backing.access = MemAccess::kShared;
       },
       BackendType::kFile, "/dev/hugepages/qlaunch/vm1", kPage2M, true, true, true},
  };
  for (const TypeCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto d = MakeDomain();
    c.setup(d);
    auto m = Plan(d);
    ASSERT_EQ(m.backends.size(), 1u);
    const MemoryBackend& b = m.backends[0];
    EXPECT_EQ(b.type, c.type);
    EXPECT_EQ(b.mem_path, c.mem_path);
    EXPECT_EQ(b.page_size_bytes, c.page);
    EXPECT_EQ(b.prealloc, c.prealloc ? PreallocBy::kQemu : PreallocBy::kNone);
    EXPECT_EQ(b.shared, c.shared);
    EXPECT_EQ(b.share_explicit, c.share_explicit);
  }
}

TEST(PlanMemory, MemoryBackingDirOption) {
  auto d = MakeDomain();
  d.memory_backing.source = MemSource::kFile;
  PlanOptions o;
  o.memory_backing_dir = "/srv/vm1/ram";
  EXPECT_EQ(Plan(d, TwoNodeHost(), Caps72(), o).backends.at(0).mem_path, "/srv/vm1/ram");
}

TEST(PlanMemory, CellAccessOverridesDomainAccess) {
  // fd-memory-numa-topology2: private domain, shared cell 1.
  auto d = MakeDomain();
  d.memory_backing.access = MemAccess::kPrivate;
  SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB, MemAccess::kShared)});
  auto m = Plan(d);
  EXPECT_EQ(m.backends[0].share_explicit, std::optional<bool>(false));
  EXPECT_EQ(m.backends[1].share_explicit, std::optional<bool>(true));
  EXPECT_TRUE(m.backends[1].shared);
  EXPECT_EQ(m.backends[1].type, BackendType::kFile);
}

TEST(PlanMemory, PageSizePerCell) {
  // hugepages-numa-nodeset: 2M for cell 1, 1G for cells 0, 2, 3.
  auto d = MakeDomain();
  SetHugepages(d, {Page(kPage2M, IdSet{1}, 7), Page(kPage1G, IdSet{0, 2, 3}, 8)});
  SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB), Cell(2, IdSet{2}, GiB), Cell(3, IdSet{3}, GiB)});
  auto m = Plan(d);
  std::vector<uint64_t> pages;
  for (const auto& b : m.backends) pages.push_back(b.page_size_bytes);
  EXPECT_EQ(pages, (std::vector<uint64_t>{kPage1G, kPage2M, kPage1G, kPage1G}));
  EXPECT_EQ(m.backends[1].mem_path, "/dev/hugepages/qlaunch/vm1");
  EXPECT_EQ(m.backends[0].mem_path, "/dev/hugepages1G/qlaunch/vm1");
}

TEST(PlanMemory, NodesetPageBeatsGenericPageAndUnmatchedCellsGetNone) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB)});
  SetHugepages(d, {Page(kPage2M), Page(kPage1G, IdSet{1})});
  auto m = Plan(d);
  EXPECT_EQ(m.backends[0].page_size_bytes, kPage2M);
  EXPECT_EQ(m.backends[1].page_size_bytes, kPage1G);

  // hugepages-numa-nodeset-part: only cell 1 has huge pages; cell 0 stays plain RAM.
  SetHugepages(d, {Page(kPage1G, IdSet{1})});
  m = Plan(d);
  EXPECT_EQ(m.backends[0].type, BackendType::kRam);
  EXPECT_EQ(m.backends[0].prealloc, PreallocBy::kNone);
  EXPECT_EQ(m.backends[1].page_size_bytes, kPage1G);
}

TEST(PlanMemory, NodesetZeroPageAppliesWithoutGuestNuma) {
  auto d = MakeDomain();  // hugepages-nodeset: no cells, <page nodeset='0'>
  SetHugepages(d, {Page(kPage1G, IdSet{0})});
  EXPECT_EQ(Plan(d).backends.at(0).page_size_bytes, kPage1G);
}

TEST(PlanMemory, DefaultPageSizeIsTheHosts) {
  auto d = MakeDomain();
  SetHugepages(d);
  auto m = Plan(d, SparseIdsHost());  // default 1G, mounted on /dev/hugepages
  EXPECT_EQ(m.backends.at(0).page_size_bytes, kPage1G);
  EXPECT_EQ(m.backends.at(0).mem_path, "/dev/hugepages/qlaunch/vm1");
}

TEST(PlanMemory, NumatuneModesAndMemnodeOverride) {
  struct Case {
    NumaMode mode;
    const char* policy;
  };
  for (Case c : {Case{NumaMode::kStrict, "bind"}, Case{NumaMode::kPreferred, "preferred"},
                 Case{NumaMode::kInterleave, "interleave"}}) {
    auto d = MakeDomain();
    SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB), Cell(2, IdSet{2}, GiB)});
    SetNumatuneMemory(d, c.mode, IdSet{0, 1});
    AddMemnode(d, 1, NumaMode::kPreferred, IdSet{1});
    AddMemnode(d, 2, NumaMode::kRestrictive, IdSet{0});
    auto m = Plan(d);
    EXPECT_EQ(m.backends[0].host_nodes, (IdSet{0, 1}));
    EXPECT_EQ(m.backends[0].policy, c.policy);
    EXPECT_EQ(m.backends[1].host_nodes, IdSet{1});
    EXPECT_EQ(m.backends[1].policy, "preferred");
    EXPECT_TRUE(m.backends[2].host_nodes.Empty());  // restrictive: no binding
    EXPECT_EQ(m.backends[2].policy, "");
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].message.find("restrictive"), std::string::npos);
    EXPECT_EQ(m.notes[0].severity, Severity::kWarning);
  }
}

TEST(PlanMemory, MemnodeWithoutDomainWideMemoryLeavesOtherCellsUnbound) {
  auto d = MakeDomain();  // numatune-memnode-no-memory
  SetCells(d, {Cell(0, IdSet{0}, 32 << 20), Cell(1, IdSet{1}, 32 << 20)});
  AddMemnode(d, 0, NumaMode::kPreferred, IdSet{1});
  auto m = Plan(d);
  EXPECT_EQ(m.backends[0].host_nodes, IdSet{1});
  EXPECT_TRUE(m.backends[1].host_nodes.Empty());
}

TEST(PlanMemory, AutoPlacementBindsToCpuNodesWithANote) {
  auto d = MakeDomain();
  d.numatune.present = true;
  d.numatune.memory_line = 11;
  d.numatune.mode = NumaMode::kStrict;
  d.numatune.placement = domain::Placement::kAuto;
  auto m = Plan(d, FourNodeCpulessHost());
  EXPECT_EQ(m.backends.at(0).host_nodes, (IdSet{0, 1}));
  EXPECT_EQ(m.backends.at(0).policy, "bind");
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_EQ(m.notes[0].line, 11);
  EXPECT_NE(m.notes[0].message.find("numad"), std::string::npos);
}

TEST(PlanMemory, UnknownHostNodeIsAnError) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB)});
  AddMemnode(d, 1, NumaMode::kStrict, IdSet{0, 2, 3});
  Diagnostic e = PlanError(d);
  EXPECT_EQ(e.message, "NUMA node 2 is unavailable");
  EXPECT_EQ(e.element, "memnode");
  EXPECT_EQ(e.line, 13);
  EXPECT_EQ(e.file, "vm1.xml");

  auto d2 = MakeDomain();
  SetNumatuneMemory(d2, NumaMode::kStrict, IdSet{0, 1, 2, 3, 4, 5, 6, 7, 8});
  e = PlanError(d2, SparseIdsHost());  // nodes 0, 2, 5
  EXPECT_EQ(e.message, "NUMA node 1 is unavailable");
  EXPECT_EQ(e.element, "memory");
  EXPECT_EQ(e.line, 11);
}

TEST(PlanMemory, MissingHugetlbfsMountIsAnError) {
  auto d = MakeDomain();
  SetHugepages(d, {Page(5 * 1024 * KiB, std::nullopt, 9)});  // hugepages-default-5M
  Diagnostic e = PlanError(d);
  EXPECT_EQ(e.message, "Unable to find any usable hugetlbfs mount for 5120 KiB");
  EXPECT_EQ(e.element, "page");
  EXPECT_EQ(e.line, 9);

  auto d2 = MakeDomain();
  SetHugepages(d2, {Page(kPage1G)});
  e = PlanError(d2, FourNodeCpulessHost());  // only 2M is mounted there
  EXPECT_EQ(e.message, "Unable to find any usable hugetlbfs mount for 1048576 KiB");
}

TEST(PlanMemory, DimmInheritsCellAccessPageAndNumatune) {
  // hugepages-memaccess: a DIMM on guest node 1 takes cell 1's shared access and 2M pages,
  // and the domain-wide numatune.
  auto d = MakeDomain();
  SetHugepages(d, {Page(kPage2M, IdSet{1}), Page(kPage1G, IdSet{0})});
  d.memory_backing.access = MemAccess::kPrivate;
  SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB, MemAccess::kShared)});
  SetNumatuneMemory(d, NumaMode::kStrict, IdSet{0, 1});
  d.max_memory_bytes = 8 * GiB;
  d.max_memory_slots = 16;
  domain::MemoryDevice dimm;
  dimm.model = "dimm";
  dimm.size_bytes = 512 << 20;
  dimm.node = 1;
  dimm.slot = 0;
  dimm.base = 0x100000000;
  d.devices.memory.push_back(dimm);
  auto m = Plan(d);
  ASSERT_EQ(m.backends.size(), 3u);
  const MemoryBackend& b = m.backends[2];
  EXPECT_EQ(b.id, "memdimm0");
  EXPECT_EQ(b.page_size_bytes, kPage2M);
  EXPECT_EQ(b.share_explicit, std::optional<bool>(true));
  EXPECT_EQ(b.host_nodes, (IdSet{0, 1}));
  EXPECT_EQ(b.policy, "bind");
  EXPECT_EQ(b.prealloc, PreallocBy::kQemu);
  ASSERT_EQ(m.devices.size(), 1u);
  EXPECT_EQ(m.devices[0].driver, "pc-dimm");
  EXPECT_EQ(m.devices[0].id, "dimm0");
  EXPECT_EQ(m.devices[0].memdev, "memdimm0");
  EXPECT_EQ(m.devices[0].node, 1u);
  EXPECT_EQ(m.devices[0].slot, std::optional<unsigned>(0));
  EXPECT_EQ(m.devices[0].addr, std::optional<uint64_t>(0x100000000));
}

TEST(PlanMemory, DimmSourceNodemaskAndPagesize) {
  auto d = MakeDomain();  // memory-hotplug-dimm: nodemask 1 + 1G pages; a plain DIMM
  SetCells(d, {Cell(0, IdSet{0, 1}, GiB)});
  d.max_memory_bytes = 16 * GiB;
  d.max_memory_slots = 4;
  domain::MemoryDevice a;
  a.model = "dimm";
  a.size_bytes = GiB;
  a.node = 0;
  a.source_nodemask = IdSet{1};
  a.source_pagesize_bytes = kPage1G;
  domain::MemoryDevice plain;
  plain.model = "dimm";
  plain.size_bytes = 512 << 20;
  d.devices.memory = {a, plain};
  auto m = Plan(d);
  ASSERT_EQ(m.backends.size(), 3u);
  EXPECT_EQ(m.backends[1].id, "memdimm0");
  EXPECT_EQ(m.backends[1].host_nodes, IdSet{1});
  EXPECT_EQ(m.backends[1].policy, "bind");
  EXPECT_EQ(m.backends[1].mem_path, "/dev/hugepages1G/qlaunch/vm1");
  EXPECT_EQ(m.backends[2].id, "memdimm1");
  EXPECT_EQ(m.backends[2].type, BackendType::kRam);
  EXPECT_EQ(m.devices[1].id, "dimm1");

  d.devices.memory[0].source_nodemask = IdSet{4};
  d.devices.memory[0].line = 44;
  Diagnostic e = PlanError(d);
  EXPECT_EQ(e.message, "NUMA node 4 is unavailable");
  EXPECT_EQ(e.line, 44);
}

TEST(PlanMemory, NvdimmIsAFileBackendOnItsPath) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1}, GiB)});
  d.memory_backing.source = MemSource::kMemfd;
  SetHugepages(d, {Page(kPage2M)});
  d.max_memory_bytes = 16 * GiB;
  d.max_memory_slots = 4;
  domain::MemoryDevice n;
  n.model = "nvdimm";
  n.size_bytes = 523264 * KiB;  // memfd-memory-numa: -> 536870912
  n.node = 0;
  n.source_path = "/tmp/nvdimm";
  d.devices.memory.push_back(n);
  auto m = Plan(d);
  const MemoryBackend& b = m.backends.at(1);
  EXPECT_EQ(b.id, "memnvdimm0");
  EXPECT_EQ(b.type, BackendType::kFile);
  EXPECT_EQ(b.mem_path, "/tmp/nvdimm");
  EXPECT_EQ(b.size_bytes, 536870912u);
  EXPECT_EQ(b.page_size_bytes, 0u);
  EXPECT_EQ(b.prealloc, PreallocBy::kQemu);
  EXPECT_TRUE(m.has_nvdimm);
  EXPECT_EQ(m.devices.at(0).driver, "nvdimm");
  EXPECT_EQ(m.devices.at(0).id, "nvdimm0");
}

TEST(PlanMemory, MemoryDevicesAreNamedAfterTheirSlot) {
  // memory-hotplug-dimm-addr: slots 0 and 2 give memdimm0 and memdimm2. A device without a
  // slot takes the lowest slot no device asked for.
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1}, GiB)});
  d.max_memory_bytes = 16 * GiB;
  d.max_memory_slots = 4;
  auto dimm = [](std::optional<unsigned> slot, const char* model = "dimm") {
    domain::MemoryDevice m;
    m.model = model;
    m.size_bytes = 512 << 20;
    m.node = 0;
    m.slot = slot;
    m.line = 60;
    return m;
  };
  d.devices.memory = {dimm(2), dimm(std::nullopt), dimm(0), dimm(std::nullopt, "nvdimm")};
  auto m = Plan(d);
  std::vector<std::string> backends, ids;
  std::vector<unsigned> slots;
  for (const auto& b : m.backends) backends.push_back(b.id);
  for (const auto& dev : m.devices) {
    ids.push_back(dev.id);
    slots.push_back(dev.slot.value_or(99));
  }
  EXPECT_EQ(backends, (std::vector<std::string>{"ram-node0", "memdimm2", "memdimm1", "memdimm0", "memnvdimm3"}));
  EXPECT_EQ(ids, (std::vector<std::string>{"dimm2", "dimm1", "dimm0", "nvdimm3"}));
  EXPECT_EQ(slots, (std::vector<unsigned>{2, 1, 0, 3}));

  d.devices.memory.push_back(dimm(std::nullopt));  // a fifth device with 4 slots
  Diagnostic e = PlanError(d);
  EXPECT_EQ(e.line, 60);
  EXPECT_NE(e.message.find("slot"), std::string::npos);
}

TEST(PlanMemory, MemoryDevicesNeedMaxMemory) {
  auto d = MakeDomain();
  domain::MemoryDevice dimm;
  dimm.model = "dimm";
  dimm.size_bytes = 512 << 20;
  dimm.line = 50;
  d.devices.memory.push_back(dimm);
  Diagnostic e = PlanError(d);
  EXPECT_EQ(e.line, 50);
  EXPECT_NE(e.message.find("maxMemory"), std::string::npos);
}

TEST(PlanMemory, MemfdNeedsQemuSupport) {
  auto d = MakeDomain();
  d.memory_backing.source = MemSource::kMemfd;
  d.memory_backing.source_line = 8;
  QemuCaps caps = Caps52();
  caps.memfd = false;
  Diagnostic e = PlanError(d, TwoNodeHost(), caps);
  EXPECT_EQ(e.element, "source");
  EXPECT_EQ(e.line, 8);
}

TEST(PoolNeeds, CountsPagesPerBoundNodeOrAny) {
  auto backend = [](uint64_t size, uint64_t page, IdSet nodes, const char* policy) {
    MemoryBackend b;
    b.size_bytes = size;
    b.page_size_bytes = page;
    b.host_nodes = std::move(nodes);
    b.policy = policy;
    return b;
  };
  std::vector<MemoryBackend> bs = {
      backend(GiB, kPage2M, IdSet{1}, "bind"),            // node 1: 512
      backend(GiB + 1, kPage2M, IdSet{1}, "bind"),        // node 1: 513 (rounded up)
      backend(2 * GiB, kPage1G, IdSet{0, 1}, "bind"),     // any: 2
      backend(GiB, kPage2M, IdSet{0}, "preferred"),       // any: 512
      backend(GiB, kPage2M, IdSet{0, 1}, "interleave"),   // any: 512
      backend(GiB, kPage1G, IdSet{}, ""),                 // any: 1
      backend(GiB, 0, IdSet{0}, "bind"),                  // not hugetlb
  };
  auto needs = PoolNeeds(bs);
  ASSERT_EQ(needs.size(), 3u);
  EXPECT_EQ(needs[0].node, -1);
  EXPECT_EQ(needs[0].page_bytes, kPage2M);
  EXPECT_EQ(needs[0].pages, 1024u);
  EXPECT_EQ(needs[1].node, -1);
  EXPECT_EQ(needs[1].page_bytes, kPage1G);
  EXPECT_EQ(needs[1].pages, 3u);
  EXPECT_EQ(needs[2].node, 1);
  EXPECT_EQ(needs[2].page_bytes, kPage2M);
  EXPECT_EQ(needs[2].pages, 1025u);
}

}  // namespace
}  // namespace qlaunch::qemu
