// PlanMemoryAttach / PlanMemoryDetach: a hot-plugged DIMM planned by the start's rules, who fills
// it, the QMP arguments, and which running DIMM a detach names.
#include "qemu_cmd/memory_hotplug_plan.h"

#include <gtest/gtest.h>

#include "domain/parse_fragment.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using namespace qlaunch::testing;
using nlohmann::json;

constexpr uint64_t MiB = 1ull << 20;

// Two cells on shared 2 MiB hugetlb memfds, a DIMM in slot 0 already, room for 3.
domain::DomainDef Running() {
  domain::DomainDef d = MakeDomain("vm1", 2304 * MiB);
  d.type = "qemu";
  d.max_memory_bytes = 8192 * MiB;
  d.max_memory_slots = 3;
  SetCells(d, {Cell(0, IdSet{0, 1}, 1024 * MiB), Cell(1, IdSet{2, 3}, 1024 * MiB)});
  SetHugepages(d);
  d.memory_backing.source = domain::MemSource::kMemfd;
  d.memory_backing.access = domain::MemAccess::kShared;
  domain::MemoryDevice dimm;
  dimm.model = "dimm";
  dimm.size_bytes = 256 * MiB;
  dimm.node = 0;
  dimm.line = 30;
  d.devices.memory.push_back(dimm);
  return d;
}

domain::DeviceFragment Fragment(const std::string& xml) { return domain::ParseDeviceXml(xml, "dimm.xml"); }

// plan.json's memory devices of Running(): its DIMM in slot 0.
const json kRecorded = json::parse(R"([{"driver":"pc-dimm","id":"dimm0","memdev":"memdimm0","node":0,"slot":0}])");

MemoryAttachPlan Attach(const domain::DomainDef& d, const std::string& xml, const QemuCaps& caps = Caps72(),
                        const json& recorded = kRecorded) {
  return PlanMemoryAttach({&d, {}, 0, ""}, recorded, Fragment(xml), TwoNodeHost(), caps);
}

TEST(MemoryHotplugPlan, ASharedHugetlbDimmIsFilledByQlaunchAndHandedOverByFd) {
  const MemoryAttachPlan p = Attach(Running(), "<memory model='dimm'><source><nodemask>1</nodemask></source>"
                                               "<target><size unit='MiB'>512</size><node>1</node></target></memory>");
  EXPECT_EQ(p.device.id, "dimm1") << "the lowest free slot";
  EXPECT_EQ(p.device.slot, 1u);
  EXPECT_EQ(p.backend.id, "memdimm1");
  EXPECT_EQ(p.backend.prealloc, PreallocBy::kLauncher) << p.backend.prealloc_reason;
  EXPECT_EQ(p.backend.prealloc_cpus, (IdSet{4, 5, 6, 7})) << "the workers run on the node of its memory";
  EXPECT_FALSE(p.context);
  EXPECT_EQ(p.memory_bytes_after, 2816 * MiB);
  ASSERT_EQ(p.pool_needs.size(), 1u);
  EXPECT_EQ(p.pool_needs[0].node, 1);
  EXPECT_EQ(p.pool_needs[0].pages, 256u);
  EXPECT_EQ(p.ObjectAdd(Caps72(), 42),
            json::parse(R"({"qom-type":"memory-backend-file","id":"memdimm1","mem-path":"/proc/self/fd/42",)"
                        R"("share":true,"prealloc":false,"size":536870912,"host-nodes":[1],"policy":"bind"})"));
  EXPECT_EQ(p.DeviceAdd(), json({{"driver", "pc-dimm"}, {"node", 1}, {"memdev", "memdimm1"}, {"id", "dimm1"}, {"slot", 1}}));
  EXPECT_EQ(p.record.element, "memory");
  EXPECT_EQ(p.record.line, 1);
}

TEST(MemoryHotplugPlan, APrivateDimmIsPreallocatedByQemuWithoutAContextUnderTheSandbox) {
  const std::string f =
      "<memory model='dimm' access='private'><target><size unit='MiB'>128</size><node>0</node></target></memory>";
  const MemoryAttachPlan p = Attach(Running(), f);
  EXPECT_EQ(p.backend.prealloc, PreallocBy::kQemu);
  EXPECT_FALSE(p.context) << "resourcecontrol=deny forbids a thread-context's affinity at run time";
  EXPECT_FALSE(p.ObjectAdd(Caps72()).contains("prealloc-context"));
  EXPECT_EQ(p.ObjectAdd(Caps72()).value("prealloc", false), true);
  QemuCaps no_sandbox = Caps72();
  no_sandbox.sandbox = false;
  const MemoryAttachPlan q = Attach(Running(), f, no_sandbox);
  ASSERT_TRUE(q.context);
  EXPECT_EQ(q.ObjectAdd(no_sandbox).value("prealloc-context", ""), q.context->id);
  EXPECT_EQ(q.ContextAdd(no_sandbox).value("qom-type", ""), "thread-context");
}

TEST(MemoryHotplugPlan, RefusalsNameTheDeviceFile) {
  struct Row {
    std::string xml, error;
  };
  for (const Row& r : std::vector<Row>{
           {"<memory model='dimm'><target><size unit='GiB'>6</size><node>0</node></target></memory>",
            "dimm.xml:1: error: <memory>: Attaching memory device with size '6291456' would exceed domain's maxMemory "
            "config size '8388608'"},
           {"<memory model='dimm'><target><size unit='MiB'>128</size><node>2</node></target></memory>",
            "can't add memory backend for guest node '2' as the guest has only '2' NUMA nodes configured"},
           {"<memory model='dimm'><target><size unit='MiB'>128</size><node>0</node></target>"
            "<address type='dimm' slot='0'/></memory>",
            "memory device slot '0' is already being used by another memory device"},
           {"<memory model='dimm'><target><size unit='MiB'>128</size><node>0</node></target>"
            "<address type='dimm' slot='3'/></memory>",
            "memory device slot '3' exceeds slots count '3'"},
           {"<memory model='nvdimm'><source><path>/tmp/nv</path></source><target><size unit='MiB'>128</size>"
            "<node>0</node></target></memory>",
            "attaching a <memory model='nvdimm'> is not supported by qlaunch (only dimm and virtio-mem)"},
           {"<memory model='dimm'><target><size unit='MiB'>0</size><node>0</node></target></memory>",
            "memory device size must be greater than 0"},
       }) {
    SCOPED_TRACE(r.xml);
    try {
      Attach(Running(), r.xml);
      ADD_FAILURE() << "planned";
    } catch (const DiagnosticError& e) {
      EXPECT_NE(std::string(e.what()).find(r.error), std::string::npos) << e.what();
    }
  }
}

// The running DIMMs keep the slots they were given: after the one in slot 0 was detached, a
// DIMM in slot 1 stays there, and the new one takes slot 0.
TEST(MemoryHotplugPlan, RunningDimmsKeepTheirRecordedSlots) {
  const json in_slot_1 = json::parse(R"([{"driver":"pc-dimm","id":"dimm1","memdev":"memdimm1","node":0,"slot":1}])");
  const MemoryAttachPlan p =
      Attach(Running(), "<memory model='dimm'><target><size unit='MiB'>128</size><node>0</node></target></memory>",
             Caps72(), in_slot_1);
  EXPECT_EQ(p.device.id, "dimm0");
  try {
    Attach(Running(), "<memory model='dimm'><target><size unit='MiB'>128</size><node>0</node></target>"
                      "<address type='dimm' slot='1'/></memory>", Caps72(), in_slot_1);
    ADD_FAILURE() << "slot 1 is taken";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("memory device slot '1' is already being used"), std::string::npos);
  }
}

TEST(MemoryHotplugPlan, DetachNamesTheRunningDimmBySizeNodeAndSlot) {
  domain::DomainDef d = Running();
  domain::MemoryDevice second = d.devices.memory[0];
  second.line = 31;
  d.devices.memory.push_back(second);
  const json recorded = json::parse(R"([{"driver":"pc-dimm","id":"dimm0","memdev":"memdimm0","node":0,"slot":0},
                                        {"driver":"pc-dimm","id":"dimm1","memdev":"memdimm1","node":0,"slot":1}])");
  const auto xml = [](const std::string& tail) {
    return Fragment("<memory model='dimm'><target><size unit='MiB'>256</size><node>0</node></target>" + tail + "</memory>");
  };
  const MemoryDetachPlan first = PlanMemoryDetach(d, recorded, xml(""));
  EXPECT_EQ(first.detach.id, "dimm0");
  EXPECT_EQ(first.detach.running_line, 30);
  ASSERT_EQ(first.detach.release.size(), 1u);
  EXPECT_EQ(first.detach.release[0].execute, "object-del");
  EXPECT_EQ(first.detach.release[0].arguments, json({{"id", "memdimm0"}}));
  const MemoryDetachPlan by_slot = PlanMemoryDetach(d, recorded, xml("<address type='dimm' slot='1'/>"));
  EXPECT_EQ(by_slot.detach.id, "dimm1");
  EXPECT_EQ(by_slot.memdev, "memdimm1");
  EXPECT_THROW(PlanMemoryDetach(d, recorded, Fragment("<memory model='dimm'><target><size unit='MiB'>128</size>"
                                                      "<node>0</node></target></memory>")),
               DiagnosticError);
}

}  // namespace
}  // namespace qlaunch::qemu
