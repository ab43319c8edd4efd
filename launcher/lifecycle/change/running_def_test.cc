// The running definition through attaches and detaches: the element lands in running.xml (the
// XML as given stays), every record keeps naming its own element by line, and the live XML
// shows the device with its alias and address.
#include "launcher/lifecycle/change/running_def.h"

#include <gtest/gtest.h>

#include <fstream>

#include "domain/parser.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/live_xml.h"
#include "qemu_cmd/device_plan.h"
#include "support/plan_fixtures.h"
#include "support/slurp.h"
#include "support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kXml = R"(<domain type='qemu'>
  <name>d</name>
  <memory unit='MiB'>128</memory>
  <os><type machine='q35'>hvm</type></os>
  <devices>
    <controller type='pci' index='1' model='pcie-root-port'/>
    <controller type='pci' index='2' model='pcie-root-port'/>
    <disk type='file'><source file='/i/a.raw'/><target dev='vda' bus='virtio'/></disk>
    <interface type='user'><mac address='52:54:00:00:00:01'/></interface>
    <disk type='file'><source file='/i/b.raw'/><target dev='vdb' bus='virtio'/></disk>
  </devices>
</domain>
)";

// A state dir as `qlaunch start` leaves it: domain.xml, plan.json with the device records.
void WriteStarted(const fs::path& dir, const std::string& xml = kXml) {
  AtomicWrite(dir / "domain.xml", xml);
  const domain::DomainDef def = domain::ParseDomainXml(xml, (dir / "domain.xml").string());
  static const qemu::QemuCaps caps = testing::Caps72();
  qemu::PlanOptions opts;
  qemu::DeviceContext ctx{&def, &caps, &opts, true};
  json devices = json::array();
  for (const qemu::PlannedDevice& d : qemu::PlanDevices(ctx))
    devices.push_back(qemu::ToJson(qemu::DeviceRecord{d.element, d.line, d.family, d.driver, d.id, d.props, d.slot}));
  AtomicWrite(dir / "plan.json", json({{"argv", {"qemu"}}, {"devices", devices}}).dump());
  AtomicWrite(dir / "devices.json", json({{"interfaces", {{{"type", "user"}, {"tap", ""}}}}}).dump());
}

const qemu::DeviceRecord* ById(const RunningState& st, const std::string& id) {
  for (const qemu::DeviceRecord& r : st.records)
    if (r.id == id) return &r;
  return nullptr;
}

std::string Live(const RunningState& st) {
  LiveXmlInput in;
  in.domain_xml = st.xml;
  in.file = st.xml_file;
  in.plan = st.plan;
  in.devices = st.host;
  return LiveDomainXml(in);
}

TEST(RunningDef, BeforeAnyChangeItIsTheXmlAsGiven) {
  testing::TempDir tmp;
  WriteStarted(tmp.path);
  const RunningState st = LoadRunningState(tmp.path);
  EXPECT_EQ(st.xml, kXml);
  EXPECT_EQ(st.xml_file, (tmp.path / "domain.xml").string());
  EXPECT_EQ(st.node_index, 2u);  // libvirt-1 and libvirt-2 are taken
  ASSERT_NE(ById(st, "virtio-disk1"), nullptr);
  EXPECT_EQ(ById(st, "virtio-disk1")->line, 10);
}

TEST(RunningDef, AttachThenDetachKeepsEveryRecordOnItsElement) {
  testing::TempDir tmp;
  WriteStarted(tmp.path);
  RunningState st = LoadRunningState(tmp.path);
  qemu::DeviceRecord rec{"disk", 1, "disk", "virtio-blk-pci", "virtio-disk2", {{"drive", "libvirt-3-format"}},
                         qemu::PciSlot{"pci.3", 0, 0, false}};
  CommitAttach(&st, "<disk type='file'>\n  <source file='/i/c.raw'/>\n  <target dev='vdc' bus='virtio'/>\n</disk>\n", rec,
               3, json());
  EXPECT_EQ(testing::Slurp(tmp.path / "domain.xml"), kXml);  // as given, for dumpxml --inactive
  RunningState again = LoadRunningState(tmp.path);
  EXPECT_EQ(again.xml_file, (tmp.path / "running.xml").string());
  EXPECT_EQ(again.node_index, 3u);
  ASSERT_EQ(again.def.devices.disks.size(), 3u);
  const qemu::DeviceRecord* added = ById(again, "virtio-disk2");
  ASSERT_NE(added, nullptr);
  bool on_its_element = false;
  for (const domain::Disk& d : again.def.devices.disks) on_its_element |= d.target_dev == "vdc" && d.line == added->line;
  EXPECT_TRUE(on_its_element) << again.xml;
  std::string live = Live(again);
  EXPECT_NE(live.find("<alias name=\"virtio-disk2\"/>"), std::string::npos) << live;

  // Detach vda (the first disk): everything after it moves up a line or more, records follow.
  int vda_line = 0;
  for (const domain::Disk& d : again.def.devices.disks)
    if (d.target_dev == "vda") vda_line = d.line;
  CommitDetach(&again, "disk", vda_line);
  RunningState after = LoadRunningState(tmp.path);
  EXPECT_EQ(ById(after, "virtio-disk0"), nullptr);
  ASSERT_EQ(after.def.devices.disks.size(), 2u);
  for (const domain::Disk& d : after.def.devices.disks) {
    const qemu::DeviceRecord* r = ById(after, d.target_dev == "vdb" ? "virtio-disk1" : "virtio-disk2");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->line, d.line) << d.target_dev << "\n" << after.xml;
  }
  const qemu::DeviceRecord* nic = ById(after, "net0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->line, after.def.devices.interfaces.at(0).line);
  live = Live(after);
  EXPECT_EQ(live.find("virtio-disk0"), std::string::npos) << live;
  EXPECT_NE(live.find("<alias name=\"net0\"/>"), std::string::npos) << live;
  EXPECT_NE(live.find("<alias name=\"virtio-disk1\"/>"), std::string::npos) << live;
}

// setvcpus and update-memory-device change an element in place. kXml has no XML declaration and
// the first running.xml has one: every line moves by one, and the records must move with them
// (found when dumpxml lost a virtio-mem device's alias after update-memory-device).
TEST(RunningDef, ChangesInPlaceKeepEveryRecordOnItsElement) {
  testing::TempDir tmp;
  std::string xml = kXml;
  xml.replace(xml.find("<name>d</name>"), 14, "<name>d</name><vcpu current='2'>3</vcpu>");  // same lines
  WriteStarted(tmp.path, xml);
  RunningState st = LoadRunningState(tmp.path);
  CommitVcpus(&st, 2, 2);  // as it started: nothing to write
  EXPECT_FALSE(fs::exists(tmp.path / "running.xml"));
  CommitVcpus(&st, 2, 1);  // <vcpu current='1'>: only the attribute changes
  EXPECT_NE(st.xml.find("<?xml"), std::string::npos) << "running.xml starts with a declaration";
  RunningState read = LoadRunningState(tmp.path);
  ASSERT_NE(ById(read, "virtio-disk1"), nullptr);
  EXPECT_EQ(ById(read, "virtio-disk1")->line, 11) << read.xml;
  std::string live = Live(read);
  EXPECT_NE(live.find("<alias name=\"virtio-disk1\"/>"), std::string::npos) << live;
  EXPECT_NE(live.find("<alias name=\"net0\"/>"), std::string::npos) << live;

  // One vCPU plugged: <vcpus> (five more lines before the devices) says which, and every record
  // still names its element.
  CommitVcpus(&read, 2, 3);
  read = LoadRunningState(tmp.path);
  EXPECT_EQ(read.def.vcpu.current, std::nullopt) << read.xml;
  ASSERT_EQ(read.def.vcpu.states.size(), 3u) << read.xml;
  for (unsigned id = 0; id < 3; ++id) {
    EXPECT_EQ(read.def.vcpu.states[id].id, id);
    EXPECT_TRUE(read.def.vcpu.states[id].enabled);
    EXPECT_EQ(read.def.vcpu.states[id].hotpluggable, id == 2) << id;
  }
  ASSERT_NE(ById(read, "virtio-disk1"), nullptr);
  EXPECT_EQ(ById(read, "virtio-disk1")->line, 16) << read.xml;
  EXPECT_EQ(read.def.devices.disks.at(1).line, 16) << read.xml;
  live = Live(read);
  EXPECT_NE(live.find("<vcpu id=\"2\" enabled=\"yes\" hotpluggable=\"yes\" order=\"3\"/>"), std::string::npos) << live;
  EXPECT_NE(live.find("<alias name=\"virtio-disk1\"/>"), std::string::npos) << live;

  // Unplugged again: <vcpus> goes, the records follow back.
  CommitVcpus(&read, 2, 2);
  read = LoadRunningState(tmp.path);
  EXPECT_TRUE(read.def.vcpu.states.empty()) << read.xml;
  EXPECT_EQ(read.def.vcpu.current, 2u) << read.xml;
  EXPECT_EQ(ById(read, "virtio-disk1")->line, 11) << read.xml;
}

TEST(RunningDef, RequestedSizeOfAVirtioMemDeviceIsWrittenInItsTarget) {
  testing::TempDir tmp;
  std::string xml = kXml;
  xml.replace(xml.find("<memory unit='MiB'>128</memory>"), 31,
              "<maxMemory slots='2' unit='MiB'>2048</maxMemory><memory unit='MiB'>640</memory>\n"
              "  <cpu><numa><cell id='0' cpus='0' memory='128' unit='MiB'/></numa></cpu>");
  xml.replace(xml.find("  </devices>"), 0,
              "    <memory model='virtio-mem'><target><size unit='MiB'>512</size><node>0</node>"
              "<block unit='KiB'>2048</block></target></memory>\n");
  AtomicWrite(tmp.path / "domain.xml", xml);
  AtomicWrite(tmp.path / "plan.json", json({{"argv", {"qemu"}}, {"devices", json::array()}}).dump());
  AtomicWrite(tmp.path / "devices.json", json::object().dump());
  RunningState st = LoadRunningState(tmp.path);
  ASSERT_EQ(st.def.devices.memory.size(), 1u);
  const int line = st.def.devices.memory[0].line;
  CommitMemoryRequested(&st, line, 128ull << 20);
  EXPECT_EQ(st.def.devices.memory[0].requested_bytes, 128ull << 20);
  EXPECT_EQ(st.def.devices.memory[0].line, line + 1) << "the declaration moved it";
  CommitMemoryRequested(&st, line + 1, 64ull << 20);  // replaced, not added again
  const RunningState read = LoadRunningState(tmp.path);
  ASSERT_EQ(read.def.devices.memory.size(), 1u);
  EXPECT_EQ(read.def.devices.memory[0].requested_bytes, 64ull << 20);
  EXPECT_EQ(read.xml.find("<requested"), read.xml.rfind("<requested"));
  EXPECT_THROW(CommitMemoryRequested(&st, 1, 0), std::runtime_error);
}

TEST(RunningDef, InterfacesKeepTheirHostSideInOrder) {
  testing::TempDir tmp;
  WriteStarted(tmp.path);
  RunningState st = LoadRunningState(tmp.path);
  CommitAttach(&st, "<interface type='user'/>", {"interface", 1, "net", "e1000", "net1", {{"mac", "52:54:00:00:00:02"}}, {}},
               st.node_index, json({{"type", "user"}, {"tap", "t1"}, {"mac", "52:54:00:00:00:02"}}));
  EXPECT_EQ(LoadRunningState(tmp.path).host["interfaces"].size(), 2u);
  CommitDetach(&st, "interface", st.def.devices.interfaces.at(0).line);
  const RunningState after = LoadRunningState(tmp.path);
  ASSERT_EQ(after.host["interfaces"].size(), 1u);
  EXPECT_EQ(after.host["interfaces"][0]["tap"], "t1");
}

// change-media and attach-device share libvirt's node counter: media.json records the next one.
TEST(RunningDef, NodeIndexCountsChangedMedia) {
  testing::TempDir tmp;
  WriteStarted(tmp.path);
  AtomicWrite(tmp.path / "media.json", R"({"next_node_index": 6, "nodes": {"vda": "libvirt-5"}})");
  EXPECT_EQ(LoadRunningState(tmp.path).node_index, 5u);
  RunningState st = LoadRunningState(tmp.path);
  CommitAttach(&st, "<disk type='file'><source file='/i/c.raw'/><target dev='vdc' bus='virtio'/></disk>",
               {"disk", 1, "disk", "virtio-blk-pci", "virtio-disk2", {{"drive", "libvirt-6-format"}}, {}}, 6, json());
  EXPECT_EQ(LoadRunningState(tmp.path).node_index, 6u);
}

TEST(RunningDef, ChangeJournal) {
  testing::TempDir tmp;
  EXPECT_FALSE(ReadChange(tmp.path));
  WriteChange(tmp.path, {{"op", "attach"}, {"id", "net3"}});
  ASSERT_TRUE(ReadChange(tmp.path));
  EXPECT_EQ((*ReadChange(tmp.path))["id"], "net3");
  ClearChange(tmp.path);
  EXPECT_FALSE(ReadChange(tmp.path));
}

}  // namespace
}  // namespace qlaunch::launcher
