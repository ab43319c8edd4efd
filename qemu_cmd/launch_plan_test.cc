#include "qemu_cmd/launch_plan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/parser.h"
#include "qemu_cmd/planner.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using namespace qlaunch::testing;

TEST(LaunchPlanStrings, EnumNames) {
  EXPECT_STREQ(ToString(BackendType::kRam), "ram");
  EXPECT_STREQ(ToString(BackendType::kFile), "file");
  EXPECT_STREQ(ToString(BackendType::kMemfd), "memfd");
  EXPECT_STREQ(ToString(PreallocBy::kNone), "none");
  EXPECT_STREQ(ToString(PreallocBy::kQemu), "qemu");
  EXPECT_STREQ(ToString(PreallocBy::kLauncher), "launcher");
  EXPECT_STREQ(ToString(PreallocMode::kAuto), "auto");
  EXPECT_STREQ(ToString(PreallocMode::kLauncher), "launcher");
}

TEST(LaunchPlanStrings, QomTypeOfLauncherBackendsIsFile) {
  MemoryBackend b;
  b.type = BackendType::kMemfd;
  EXPECT_STREQ(QomType(b), "memory-backend-memfd");
  b.prealloc = PreallocBy::kLauncher;
  EXPECT_STREQ(QomType(b), "memory-backend-file");
  b.type = BackendType::kRam;
  b.prealloc = PreallocBy::kQemu;
  EXPECT_STREQ(QomType(b), "memory-backend-ram");
}

// Every planned device, as `qlaunch dumpxml` reads it from the state dir's plan.json: the element
// and line it came from, its id, properties and PCI address, in argv order (the -device options).
TEST(ToJson, RecordsEveryDeviceWithItsElementIdAndAddress) {
  const domain::DomainDef d = domain::ParseDomainXml(
      "<domain type='qemu'><name>d</name><memory unit='MiB'>128</memory>\n"
      "<os><type machine='q35'>hvm</type></os><devices>\n"
      "<interface type='user'><mac address='52:54:00:00:00:01'/><model type='virtio'/></interface>\n"
      "</devices></domain>",
      "d.xml");
  const LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps72(), PlanOptions{});
  const nlohmann::json j = ToJson(plan);
  ASSERT_TRUE(j["devices"].is_array());
  EXPECT_EQ(j["memory_devices"], nlohmann::json::array());
  size_t with_driver = 0;
  const nlohmann::json* nic = nullptr;
  for (const auto& dev : j["devices"]) {
    with_driver += !dev["driver"].get<std::string>().empty();
    if (dev["id"] == "net0") nic = &dev;
  }
  size_t device_options = 0;
  for (const std::string& a : plan.argv) device_options += a == "-device";
  EXPECT_EQ(with_driver, device_options);
  ASSERT_NE(nic, nullptr) << j["devices"].dump();
  EXPECT_EQ((*nic)["element"], "interface");
  EXPECT_EQ((*nic)["line"], 3);
  EXPECT_EQ((*nic)["driver"], "virtio-net-pci");
  EXPECT_NE((*nic)["props"].dump().find("[\"mac\",\"52:54:00:00:00:01\"]"), std::string::npos) << nic->dump();
  // On q35 a PCIe NIC goes behind the first root port the assignment added: pci.1, slot 0.
  EXPECT_EQ((*nic)["pci"], nlohmann::json::parse(R"({"bus":"pci.1","slot":0,"function":0,"multifunction":false})"));
}

TEST(ToJson, DescribesBackendsAndContexts) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1}, 1ull << 30), Cell(1, IdSet{2, 3}, 1ull << 30, domain::MemAccess::kShared)});
  d.memory_backing.source = domain::MemSource::kMemfd;
  SetHugepages(d, {Page(kPage2M)});
  AddMemnode(d, 0, domain::NumaMode::kStrict, IdSet{2});
  AddMemnode(d, 1, domain::NumaMode::kPreferred, IdSet{1});
  d.memory_backing.access = domain::MemAccess::kPrivate;
  PlanOptions opts;
  opts.prealloc = PreallocMode::kLauncher;
  LaunchPlan plan = PlanLaunch(d, FourNodeCpulessHost(), Caps72(), opts);
  nlohmann::json j = ToJson(plan);

  ASSERT_TRUE(j["argv"].is_array());
  EXPECT_EQ(j["argv"].size(), plan.argv.size());
  EXPECT_EQ(j["argv"][0], plan.argv[0]);

  ASSERT_EQ(j["backends"].size(), 2u);
  const auto& b0 = j["backends"][0];  // private memfd: QEMU, context on node 0 (nearest to 2)
  EXPECT_EQ(b0["id"], "ram-node0");
  EXPECT_EQ(b0["size_bytes"], 1ull << 30);
  EXPECT_EQ(b0["host_nodes"], nlohmann::json::array({2}));
  EXPECT_EQ(b0["policy"], "bind");
  EXPECT_EQ(b0["page_size_bytes"], kPage2M);
  EXPECT_EQ(b0["shared"], false);
  EXPECT_EQ(b0["prealloc"], "qemu");
  EXPECT_EQ(b0["thread_context"], "tc-ram-node0");
  EXPECT_EQ(b0["prealloc_threads"], 4);
  EXPECT_EQ(b0["type"], "memfd");
  EXPECT_EQ(b0["qom_type"], "memory-backend-memfd");
  EXPECT_FALSE(b0.contains("launcher_fd"));

  const auto& b1 = j["backends"][1];  // shared memfd with --prealloc launcher
  EXPECT_EQ(b1["id"], "ram-node1");
  EXPECT_EQ(b1["policy"], "preferred");
  EXPECT_EQ(b1["shared"], true);
  EXPECT_EQ(b1["prealloc"], "launcher");
  EXPECT_EQ(b1["thread_context"], "");
  EXPECT_EQ(b1["qom_type"], "memory-backend-file");
  EXPECT_EQ(b1["mem_path"], "/proc/self/fd/3");
  EXPECT_EQ(b1["launcher_fd"], 3);
  EXPECT_EQ(b1["launcher_threads"], 4);
  EXPECT_EQ(b1["prealloc_cpus"], nlohmann::json::array({4, 5, 6, 7}));

  ASSERT_EQ(j["thread_contexts"].size(), 1u);
  EXPECT_EQ(j["thread_contexts"][0]["id"], "tc-ram-node0");
  EXPECT_EQ(j["thread_contexts"][0]["node_affinity"], nlohmann::json::array({0}));
  EXPECT_EQ(j["thread_contexts"][0]["cpus"], nlohmann::json::array({0, 1, 2, 3}));

  // Node 2 (bind, one node) and node 1 (preferred: any node).
  ASSERT_EQ(j["pool_needs"].size(), 2u);
  EXPECT_EQ(j["pool_needs"][0]["node"], -1);
  EXPECT_EQ(j["pool_needs"][1]["node"], 2);
  EXPECT_EQ(j["pool_needs"][1]["pages"], 512);
}

}  // namespace
}  // namespace qlaunch::qemu
