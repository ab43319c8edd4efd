#include "qemu_cmd/vcpu_hotplug_plan.h"

#include <functional>

#include <gtest/gtest.h>

namespace qlaunch::qemu {
namespace {

using nlohmann::json;

// query-hotpluggable-cpus as QEMU 7.2 answers for -smp 1,maxcpus=4,sockets=2,cores=2,threads=1
// with two guest cells (sockets 0 and 1): the last slot first, the plugged one with its path.
json Reply() {
  json r = json::array();
  for (int socket = 1; socket >= 0; --socket)
    for (int core = 1; core >= 0; --core) {
      json e = {{"type", "qemu64-x86_64-cpu"},
                {"vcpus-count", 1},
                {"props", {{"socket-id", socket}, {"core-id", core}, {"thread-id", 0}, {"node-id", socket}, {"die-id", 0}}}};
      if (socket == 0 && core == 0) e["qom-path"] = "/machine/unattached/device[0]";
      r.push_back(e);
    }
  return r;
}

std::string Error(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(VcpuHotplugPlan, EntriesInTopologyOrder) {
  const auto cpus = ParseHotpluggableCpus(Reply());
  ASSERT_EQ(cpus.size(), 4u);
  EXPECT_TRUE(cpus[0].plugged());
  EXPECT_EQ(cpus[1].props["core-id"], 1);
  EXPECT_EQ(cpus[2].props["socket-id"], 1);
  EXPECT_EQ(cpus[2].props["core-id"], 0);
  EXPECT_EQ(PluggedCount(cpus), 1u);
}

TEST(VcpuHotplugPlan, PlugsTheNextSlotsWithLibvirtsIdsAndProps) {
  const VcpuChange c = PlanSetVcpus(ParseHotpluggableCpus(Reply()), 1, 3);
  ASSERT_EQ(c.add.size(), 2u);
  EXPECT_TRUE(c.remove.empty());
  EXPECT_EQ(c.add[0].execute, "device_add");
  // libvirt's order of keys (qemuBuildCPUDeviceProps): driver, id, socket, core, thread, node, die.
  EXPECT_EQ(c.add[0].arguments.dump(), R"({"driver":"qemu64-x86_64-cpu","id":"vcpu1","socket-id":0,"core-id":1,)"
                                       R"("thread-id":0,"node-id":0,"die-id":0})");
  EXPECT_EQ(c.add[1].arguments["id"], "vcpu2");
  EXPECT_EQ(c.add[1].arguments["node-id"], 1) << "the third vCPU is in the second socket's cell";
}

TEST(VcpuHotplugPlan, UnplugsTheLastFirstButNeverABootVcpu) {
  json r = Reply();
  for (json& e : r) e["qom-path"] = "/machine/peripheral/x";  // all four plugged
  const auto cpus = ParseHotpluggableCpus(r);
  const VcpuChange c = PlanSetVcpus(cpus, 1, 2);
  EXPECT_TRUE(c.add.empty());
  EXPECT_EQ(c.remove, (std::vector<std::string>{"vcpu3", "vcpu2"}));
  EXPECT_EQ(Error([&] { PlanSetVcpus(cpus, 2, 1); }),
            "vcpu '1' can't be hot-unplugged: the domain started with 2 vCPUs (<vcpu current>), and those stay");
  EXPECT_TRUE(PlanSetVcpus(cpus, 1, 4).add.empty());
}

TEST(VcpuHotplugPlan, Refusals) {
  const auto cpus = ParseHotpluggableCpus(Reply());
  EXPECT_EQ(Error([&] { PlanSetVcpus(cpus, 1, 5); }),
            "requested vcpus is greater than max allowable vcpus for the live domain: 5 > 4");
  EXPECT_NE(Error([&] { PlanSetVcpus(cpus, 1, 0); }).find("at least one"), std::string::npos);
  json gap = Reply();
  gap[0]["qom-path"] = "/machine/peripheral/vcpu3";  // the last slot plugged, the second not
  EXPECT_NE(Error([&] { PlanSetVcpus(ParseHotpluggableCpus(gap), 1, 2); }).find("not the first ones"), std::string::npos);
  EXPECT_NE(Error([] { ParseHotpluggableCpus(json::object()); }).find("not a list"), std::string::npos);
  EXPECT_NE(Error([] { ParseHotpluggableCpus(json::array({{{"props", json::object()}}})); }).find("without type"),
            std::string::npos);
}

}  // namespace
}  // namespace qlaunch::qemu
