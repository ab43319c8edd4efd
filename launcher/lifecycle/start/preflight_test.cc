#include "launcher/lifecycle/start/preflight.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;
using qemu::LaunchPlan;
using Needs = std::vector<LaunchPlan::PoolNeed>;

constexpr uint64_t k2M = 2ull << 20;
constexpr uint64_t k1G = 1ull << 30;

numa::HostNode Node(unsigned id, std::map<uint64_t, numa::HugePool> pools) {
  numa::HostNode n;
  n.id = id;
  n.cpus = IdSet{id};
  n.hugepages = std::move(pools);
  return n;
}

// Two nodes: node 0 has 100 free of 128 2M pages and 1 free 1G page; node 1 has 10 free 2M.
numa::HostTopology TwoNodes() {
  numa::HostTopology host;
  host.nodes.push_back(Node(0, {{k2M, {128, 100}}, {k1G, {2, 1}}}));
  host.nodes.push_back(Node(1, {{k2M, {10, 10}}}));
  host.usable_cpus = IdSet{0, 1};
  return host;
}

std::string Messages(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const auto& d : diags) s += d.ToString() + "\n";
  return s;
}

TEST(CheckHugepagePools, NeedsThatFitPass) {
  std::vector<LaunchPlan::PoolNeed> needs = {{0, k2M, 100}, {1, k2M, 10}, {0, k1G, 1}};
  EXPECT_TRUE(CheckHugepagePools(needs, TwoNodes()).empty());
}

TEST(CheckHugepagePools, ShortfallNamesNodePageSizeNeededAndFree) {
  std::vector<LaunchPlan::PoolNeed> needs = {{1, k2M, 32}};
  auto errors = CheckHugepagePools(needs, TwoNodes());
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_EQ(errors[0].severity, Severity::kError);
  const std::string& m = errors[0].message;
  EXPECT_NE(m.find("not enough 2 MiB hugepages on host node 1: the domain needs 32, 10 are free"), std::string::npos)
      << m;
  // The hint names the pool to grow, to the size that would do.
  EXPECT_NE(m.find("echo 32 > /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"),
            std::string::npos)
      << m;
}

TEST(CheckHugepagePools, NeedsOfOnePoolAreSummed) {
  // 60 + 60 pages on node 0: each fits the 100 free pages, together they do not.
  std::vector<LaunchPlan::PoolNeed> needs = {{0, k2M, 60}, {0, k2M, 60}};
  auto errors = CheckHugepagePools(needs, TwoNodes());
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_NE(errors[0].message.find("host node 0: the domain needs 120, 100 are free"), std::string::npos)
      << errors[0].message;
}

TEST(CheckHugepagePools, EveryShortPoolIsReported) {
  std::vector<LaunchPlan::PoolNeed> needs = {{0, k1G, 2}, {1, k2M, 11}};
  auto errors = CheckHugepagePools(needs, TwoNodes());
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  std::string all = Messages(errors);
  EXPECT_NE(all.find("not enough 1 GiB hugepages on host node 0: the domain needs 2, 1 is free"), std::string::npos)
      << all;
  EXPECT_NE(all.find("not enough 2 MiB hugepages on host node 1: the domain needs 11, 10 are free"),
            std::string::npos)
      << all;
}

TEST(CheckHugepagePools, MissingPoolOrNodeCountsAsNoFreePages) {
  std::vector<LaunchPlan::PoolNeed> needs = {{1, k1G, 1}, {7, k2M, 1}};
  auto errors = CheckHugepagePools(needs, TwoNodes());
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  std::string all = Messages(errors);
  EXPECT_NE(all.find("1 GiB hugepages on host node 1: the domain needs 1, 0 are free"), std::string::npos) << all;
  EXPECT_NE(all.find("2 MiB hugepages on host node 7: the domain needs 1, 0 are free (the host has no such node)"),
            std::string::npos)
      << all;
}

TEST(CheckHugepagePools, UnboundNeedsUseAllNodesTogetherWithBoundOnes) {
  // 110 free 2M pages in all. Unbound 100 fits alone; with 20 bound to node 0 it does not.
  EXPECT_TRUE(CheckHugepagePools(Needs{{-1, k2M, 110}}, TwoNodes()).empty());
  auto errors = CheckHugepagePools(Needs{{-1, k2M, 100}, {0, k2M, 20}}, TwoNodes());
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_NE(errors[0].message.find("not enough 2 MiB hugepages on the host (all nodes): the domain needs 120, "
                                   "110 are free"),
            std::string::npos)
      << errors[0].message;
  EXPECT_NE(errors[0].message.find("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"), std::string::npos);
}

TEST(CheckHugepagePools, OrdinaryPagesAreNotChecked) {
  EXPECT_TRUE(CheckHugepagePools(Needs{{0, 0, 1000000}}, TwoNodes()).empty());
}

TEST(CheckAccelerator, QemuTypeNeedsNothing) {
  domain::DomainDef def;
  def.type = "qemu";
  EXPECT_TRUE(CheckAccelerator(def, "/nonexistent/kvm").empty());
}

TEST(CheckAccelerator, KvmTypeWithoutKvmSuggestsTcg) {
  char tmpl[] = "/tmp/qlaunch-preflight-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  fs::path dir = tmpl;
  {
    std::ofstream(dir / "d.xml") << "<?xml version='1.0'?>\n<domain type='kvm'>\n</domain>\n";
  }
  domain::DomainDef def;
  def.type = "kvm";
  def.file = (dir / "d.xml").string();
  auto errors = CheckAccelerator(def, dir / "no-kvm");
  fs::remove_all(dir);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2);
  EXPECT_EQ(errors[0].element, "domain");
  EXPECT_NE(errors[0].message.find("cannot open " + (dir / "no-kvm").string()), std::string::npos)
      << errors[0].message;
  EXPECT_NE(errors[0].message.find("type='qemu'"), std::string::npos) << errors[0].message;
}

TEST(MissingMemPathDirs, OnlyMissingDirsUnderKnownRootsParentsFirst) {
  char tmpl[] = "/tmp/qlaunch-mempath-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  fs::path root = tmpl;
  fs::create_directories(root / "hugetlbfs");
  fs::create_directories(root / "hugetlbfs" / "exists");
  LaunchPlan plan;
  auto file_backend = [](std::string path) {
    qemu::MemoryBackend b;
    b.type = qemu::BackendType::kFile;
    b.mem_path = std::move(path);
    return b;
  };
  plan.backends.push_back(file_backend((root / "hugetlbfs/qlaunch/vm/ram-node0").string()));
  plan.backends.push_back(file_backend((root / "hugetlbfs/qlaunch/vm/ram-node1").string()));
  plan.backends.push_back(file_backend((root / "hugetlbfs/exists").string()));
  plan.backends.push_back(file_backend("/proc/self/fd/3"));
  plan.backends.push_back(file_backend((root / "elsewhere/nvdimm.img").string()));
  qemu::MemoryBackend ram;  // not a file backend
  ram.mem_path = (root / "hugetlbfs/never").string();
  plan.backends.push_back(ram);

  auto dirs = MissingMemPathDirs(plan, {root / "hugetlbfs"});
  fs::remove_all(root);
  std::vector<fs::path> want = {root / "hugetlbfs/qlaunch", root / "hugetlbfs/qlaunch/vm",
                                root / "hugetlbfs/qlaunch/vm/ram-node0", root / "hugetlbfs/qlaunch/vm/ram-node1"};
  EXPECT_EQ(dirs, want);
}

}  // namespace
}  // namespace qlaunch::launcher

namespace qlaunch::launcher {
namespace {

// One node, 4608 free 2M pages of which 3072 are reserved by a start still filling: 1536 are
// really there.
numa::HostTopology OneNodeFree(uint64_t total, uint64_t free) {
  numa::HostTopology host;
  numa::HostNode n;
  n.id = 0;
  n.cpus = IdSet{0};
  n.hugepages = {{2ull << 20, {total, free}}};
  host.nodes.push_back(n);
  return host;
}

TEST(CheckHugepagePoolsReserved, ReservedPagesAreNotFreeOnAOneNodePool) {
  constexpr uint64_t k2M = 2ull << 20;
  auto host = OneNodeFree(4608, 4608);
  const std::map<uint64_t, uint64_t> reserved = {{k2M, 3072}};
  EXPECT_TRUE(CheckHugepagePools(Needs{{0, k2M, 3072}}, host).empty()) << "without reservations it fits";
  auto errors = CheckHugepagePools(Needs{{0, k2M, 3072}}, host, reserved);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "not enough 2 MiB hugepages on host node 0: the domain needs 3072, 1536 are free (4608 free, 3072 of them "
            "reserved by mappings not filled yet, such as a start under way; reserve more with: echo 6144 > "
            "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages)");
  errors = CheckHugepagePools(Needs{{-1, k2M, 3072}}, host, reserved);  // unbound: the same count
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("on the host (all nodes): the domain needs 3072, 1536 are free (4608 free"),
            std::string::npos)
      << errors[0].message;
  EXPECT_TRUE(CheckHugepagePools(Needs{{0, k2M, 1536}}, host, reserved).empty());
  EXPECT_FALSE(CheckHugepagePools(Needs{{0, k2M, 1537}}, host, reserved).empty());
}

TEST(CheckHugepagePoolsReserved, ReservationsAreCountedForAllNodesTogether) {
  constexpr uint64_t k2M = 2ull << 20;
  numa::HostTopology host = TwoNodes();  // 2M: node 0 100 free, node 1 10 free
  // Per node the kernel does not tell where the 50 reserved pages lie: node checks use free,
  // the check of all nodes together takes them off.
  const std::map<uint64_t, uint64_t> reserved = {{k2M, 50}};
  EXPECT_TRUE(CheckHugepagePools(Needs{{0, k2M, 60}}, host, reserved).empty());
  auto errors = CheckHugepagePools(Needs{{0, k2M, 70}}, host, reserved);
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_NE(errors[0].message.find("on the host (all nodes): the domain needs 70, 60 are free (110 free, 50 of them"),
            std::string::npos)
      << errors[0].message;
  errors = CheckHugepagePools(Needs{{1, k2M, 20}}, host, reserved);  // short on its node: said once
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_NE(errors[0].message.find("on host node 1: the domain needs 20, 10 are free (reserve"), std::string::npos)
      << errors[0].message;
}

}  // namespace
}  // namespace qlaunch::launcher
