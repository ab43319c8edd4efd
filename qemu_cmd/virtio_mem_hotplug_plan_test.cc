// PlanMemoryAttach / PlanMemoryDetach of a <memory model='virtio-mem'>: named after the highest
// running virtio-mem device, on a free hotpluggable PCI slot, its backend reserving and
// preallocating nothing (the device preallocates what the guest plugs), the pool asked for the
// requested size only, libvirt's refusals naming the device file and line.
#include <gtest/gtest.h>

#include "domain/parse_fragment.h"
#include "domain/parser.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/memory_hotplug_plan.h"
#include "qemu_cmd/memory_plan.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using nlohmann::json;
using namespace qlaunch::testing;

constexpr uint64_t MiB = 1ull << 20;

// A running q35 domain: two cells on shared 2 MiB hugetlb memfds, a virtio-mem device on node 0
// (started with it), `ports` root ports; its records as plan.json holds them.
struct Running {
  domain::DomainDef def;
  RunningDomain domain;
  json memory_devices;
};

Running Start(int ports = 3, unsigned slots = 3) {
  std::string controllers = "<controller type='pci' index='0' model='pcie-root'/>";
  for (int i = 1; i <= ports; ++i)
    controllers += "<controller type='pci' index='" + std::to_string(i) + "' model='pcie-root-port'/>";
  Running r;
  r.def = domain::ParseDomainXml(
      "<domain type='qemu'><name>d</name><maxMemory slots='" + std::to_string(slots) +
          "' unit='MiB'>8192</maxMemory><memory unit='MiB'>2560</memory>"
          "<memoryBacking><hugepages/><source type='memfd'/><access mode='shared'/></memoryBacking>"
          "<vcpu>4</vcpu><os><type machine='q35'>hvm</type></os>"
          "<cpu><numa><cell id='0' cpus='0-1' memory='1024' unit='MiB'/><cell id='1' cpus='2-3' memory='1024' "
          "unit='MiB'/></numa></cpu>\n<devices>" + controllers +
          "<controller type='usb' model='none'/><memballoon model='none'/>\n"
          "<memory model='virtio-mem'><target><size unit='MiB'>512</size><node>0</node><block unit='KiB'>2048</block>"
          "<requested unit='MiB'>128</requested></target></memory></devices></domain>",
      "running.xml");
  static const QemuCaps caps = Caps72();
  PlanOptions opts;
  const MemoryLayout layout = PlanMemory(r.def, TwoNodeHost(), caps, opts);
  DeviceContext ctx{&r.def, &caps, &opts, true, &layout};
  for (const PlannedDevice& d : PlanDevices(ctx))
    r.domain.devices.push_back({d.element, d.line, d.family, d.driver, d.id, d.props, d.slot});
  r.domain.def = &r.def;
  r.memory_devices = json::parse(R"([{"driver":"virtio-mem-pci","id":"virtiomem0","memdev":"memvirtiomem0","node":0,
                                      "block_size":2097152,"requested_size":134217728}])");
  return r;
}

domain::DeviceFragment Fragment(const std::string& xml) { return domain::ParseDeviceXml(xml, "vmem.xml"); }

MemoryAttachPlan Attach(const Running& r, const std::string& xml, const QemuCaps& caps = Caps72()) {
  return PlanMemoryAttach(r.domain, r.memory_devices, Fragment(xml), TwoNodeHost(), caps);
}

std::string ErrorOf(const Running& r, const std::string& xml) {
  try {
    Attach(r, xml);
  } catch (const DiagnosticError& e) {
    return e.what();
  }
  return "planned";
}

const char* kOnNode1 =
    "<memory model='virtio-mem'><target><size unit='MiB'>1024</size><node>1</node><block unit='KiB'>2048</block>"
    "<requested unit='MiB'>256</requested></target></memory>";

TEST(VirtioMemHotplugPlan, NamedAfterTheRunningOnesOnAFreeHotpluggableSlot) {
  const Running r = Start();
  const MemoryAttachPlan p = Attach(r, kOnNode1);
  EXPECT_EQ(p.device.id, "virtiomem1");
  EXPECT_EQ(p.backend.id, "memvirtiomem1");
  ASSERT_TRUE(p.record.slot);
  std::set<std::pair<std::string, unsigned>> taken;
  for (const DeviceRecord& d : r.domain.devices)
    if (d.slot) taken.insert({d.slot->bus, d.slot->slot});
  EXPECT_FALSE(taken.count({p.record.slot->bus, p.record.slot->slot})) << p.record.slot->bus;
  EXPECT_NE(p.record.slot->bus, "pcie.0") << "on q35 a hot-plugged device needs a root port";
  EXPECT_EQ(p.record.element, "memory");
  EXPECT_EQ(p.record.driver, "virtio-mem-pci");
  const json add = p.DeviceAdd();
  EXPECT_EQ(add.value("driver", ""), "virtio-mem-pci");
  EXPECT_EQ(add.value("id", ""), "virtiomem1");
  EXPECT_EQ(add.value("memdev", ""), "memvirtiomem1");
  EXPECT_EQ(add.value("node", ""), "1");
  EXPECT_EQ(add.value("block-size", ""), "2097152");
  EXPECT_EQ(add.value("requested-size", ""), "268435456");
  EXPECT_EQ(add.value("prealloc", ""), "on") << "hugepages: the device preallocates what it plugs (QEMU 7.1+)";
  EXPECT_EQ(add.value("bus", ""), p.record.slot->bus);
  EXPECT_EQ(p.memory_bytes_after, 3584 * MiB);
}

TEST(VirtioMemHotplugPlan, TheBackendReservesNothingAndThePoolIsAskedForTheRequestedSize) {
  const MemoryAttachPlan p = Attach(Start(), kOnNode1);
  EXPECT_EQ(p.backend.prealloc, PreallocBy::kNone) << "neither qlaunch nor QEMU fills a virtio-mem backend";
  EXPECT_FALSE(p.context);
  const json obj = p.ObjectAdd(Caps72());
  EXPECT_EQ(obj.value("qom-type", ""), "memory-backend-memfd");
  EXPECT_EQ(obj.value("reserve", true), false);
  EXPECT_EQ(obj.value("prealloc", false), false);
  EXPECT_EQ(obj.value("size", uint64_t{0}), 1024 * MiB);
  ASSERT_EQ(p.pool_needs.size(), 1u);
  EXPECT_EQ(p.pool_needs[0].pages, 128u) << "256 MiB requested, not the 1 GiB device";
  EXPECT_EQ(p.DeviceJson().value("requested_size", uint64_t{0}), 256 * MiB);
}

TEST(VirtioMemHotplugPlan, TheXmlsPciAddressIsKeptAndAClashRefused) {
  const Running r = Start();
  const std::string at = "<memory model='virtio-mem'><target><size unit='MiB'>256</size><node>0</node>"
                         "<block unit='KiB'>2048</block></target><address type='pci' domain='0x0000' bus='0x03' "
                         "slot='0x00' function='0x0'/></memory>";
  const MemoryAttachPlan p = Attach(r, at);
  ASSERT_TRUE(p.record.slot);
  EXPECT_EQ(p.record.slot->bus, "pci.3");
  EXPECT_FALSE(p.DeviceAdd().contains("requested-size")) << "nothing requested: not rendered, as at start";
  // The start's virtio-mem device sits on the first root port.
  std::string first;
  for (const DeviceRecord& d : r.domain.devices)
    if (d.id == "virtiomem0" && d.slot) first = d.slot->bus;
  ASSERT_FALSE(first.empty());
  const std::string clash = "<memory model='virtio-mem'><target><size unit='MiB'>256</size><node>0</node>"
                            "<block unit='KiB'>2048</block></target><address type='pci' domain='0x0000' bus='0x0" +
                            first.substr(4) + "' slot='0x00' function='0x0'/></memory>";
  EXPECT_NE(ErrorOf(r, clash).find("vmem.xml:1"), std::string::npos) << ErrorOf(r, clash);
}

TEST(VirtioMemHotplugPlan, RefusalsAsLibvirtWithTheDeviceFileAndLine) {
  struct Row {
    int ports;
    unsigned slots;
    std::string xml, error;
  };
  const std::string ok_target = "<size unit='MiB'>256</size><node>0</node><block unit='KiB'>2048</block>";
  std::vector<Row> rows;
  rows.push_back({3, 3, "<memory model='virtio-mem'><target><size unit='MiB'>256</size><block unit='KiB'>2048</block>"
                           "</target></memory>", "target NUMA node needs to be specified for memory device"});
  rows.push_back({3, 3, "<memory model='virtio-mem'><target><size unit='MiB'>256</size><node>0</node>"
                           "<block unit='KiB'>3072</block></target></memory>", "block size must be a power of two"});
  rows.push_back({3, 3, "<memory model='virtio-mem'><target><size unit='MiB'>256</size><node>0</node>"
                           "<block unit='KiB'>2048</block><requested unit='MiB'>3</requested></target></memory>",
                  "requested size must be an integer multiple of block size"});
  rows.push_back({3, 1, "<memory model='virtio-mem'><target>" + ok_target + "</target></memory>",
                  "no free memory device slot available"});
  rows.push_back({1, 3, "<memory model='virtio-mem'><target>" + ok_target + "</target></memory>",
                  "no free hotpluggable PCI slot"});
  rows.push_back({3, 3, "<memory model='virtio-mem'><target><size unit='GiB'>6</size><node>0</node>"
                           "<block unit='KiB'>2048</block></target></memory>",
                  "would exceed domain's maxMemory config size '8388608'"});
  for (const Row& row : rows) {
    SCOPED_TRACE(row.xml);
    const Running r = Start(row.ports, row.slots);  // not copied: its domain points at its def
    const std::string e = ErrorOf(r, row.xml);
    EXPECT_NE(e.find(row.error), std::string::npos) << e;
    EXPECT_NE(e.find("vmem.xml:1"), std::string::npos) << e;
  }
  QemuCaps old = Caps72();
  old.virtio_mem = false;
  try {
    Attach(Start(), kOnNode1, old);
    ADD_FAILURE() << "planned without virtio-mem-pci";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("no virtio-mem-pci"), std::string::npos) << e.what();
  }
}

TEST(VirtioMemHotplugPlan, DetachNamesTheRecordedDevice) {
  Running r = Start();
  const MemoryDetachPlan p = PlanMemoryDetach(
      r.def, r.memory_devices,
      Fragment("<memory model='virtio-mem'><target><size unit='MiB'>512</size><node>0</node></target></memory>"));
  EXPECT_EQ(p.detach.id, "virtiomem0");
  EXPECT_EQ(p.memdev, "memvirtiomem0");
  EXPECT_EQ(p.size_bytes, 512 * MiB);
  EXPECT_THROW(PlanMemoryDetach(r.def, r.memory_devices,
                                Fragment("<memory model='virtio-mem'><target><size unit='MiB'>512</size><node>1</node>"
                                         "</target></memory>")),
               DiagnosticError);
}

}  // namespace
}  // namespace qlaunch::qemu
