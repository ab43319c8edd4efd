// The checks of the verb sequence tests (support/sequence_checks.h) on recorded answers: the live
// XML of the sequence guest with vdb, the NIC, the DIMM, two vCPUs and medium a (qlaunch dumpxml,
// trimmed to what the checks read), and what its QEMU 7.2 said; then each disagreement alone.
#include <gtest/gtest.h>

#include "support/sequence_checks.h"

namespace qlaunch::testing::seq {
namespace {

using nlohmann::json;

const char* kXml = R"(<domain type="qemu" id="9124">
  <name>seq</name>
  <maxMemory slots="1" unit="MiB">1024</maxMemory>
  <memory unit="KiB">393216</memory>
  <currentMemory unit="KiB">327680</currentMemory>
  <vcpu placement="static">2</vcpu>
  <devices>
    <disk type="file" device="disk"><source file="/g/vda.raw"/><target dev="vda" bus="virtio"/>
      <alias name="virtio-disk0"/><address type="pci" domain="0x0000" bus="0x00" slot="0x02" function="0x0"/></disk>
    <disk type="file" device="cdrom"><source file="/g/a.iso"/><target dev="hdc" bus="ide"/><readonly/>
      <alias name="ide0-1-0"/></disk>
    <controller type="usb" index="0" model="piix3-uhci"><alias name="usb"/>
      <address type="pci" domain="0x0000" bus="0x00" slot="0x01" function="0x2"/></controller>
    <controller type="ide" index="0"><alias name="ide"/>
      <address type="pci" domain="0x0000" bus="0x00" slot="0x01" function="0x1"/></controller>
    <memballoon model="virtio"><alias name="balloon0"/>
      <address type="pci" domain="0x0000" bus="0x00" slot="0x03" function="0x0"/></memballoon>
    <disk type="file" device="disk"><source file="/g/vdb.raw"/><target dev="vdb" bus="virtio"/>
      <alias name="virtio-disk1"/><address type="pci" domain="0x0000" bus="0x00" slot="0x04" function="0x0"/></disk>
    <interface type="user"><mac address="52:54:00:5e:71:01"/><model type="virtio"/><alias name="net0"/>
      <address type="pci" domain="0x0000" bus="0x00" slot="0x05" function="0x0"/></interface>
    <memory model="dimm"><target><size unit="KiB">131072</size><node>0</node></target><alias name="dimm0"/>
      <address type="dimm" slot="0" base="0x100000000"/></memory>
  </devices>
</domain>
)";

json Pci(int slot, int function, const std::string& id) {
  return {{"bus", 0}, {"slot", slot}, {"function", function}, {"qdev_id", id}};
}

json Qemu() {
  json cpus = json::array({{{"props", {{"socket-id", 1}}}, {"qom-path", "/machine/peripheral/vcpu1"}},
                           {{"props", {{"socket-id", 0}}}, {"qom-path", "/machine/unattached/device[0]"}}});
  json memory = json::array({{{"type", "dimm"}, {"data", {{"id", "dimm0"}, {"size", 134217728}}}}});
  json block = json::array(
      {{{"qdev", "/machine/peripheral/virtio-disk0/virtio-backend"}, {"inserted", {{"file", "/g/vda.raw"}}}},
       {{"qdev", "ide0-1-0"}, {"inserted", {{"file", "/g/a.iso"}}}, {"tray_open", false}},
       {{"qdev", "/machine/peripheral/virtio-disk1/virtio-backend"}, {"inserted", {{"file", "/g/vdb.raw"}}}}});
  json pci = json::array({{{"bus", 0},
                           {"devices", {Pci(0, 0, ""), Pci(1, 0, ""), Pci(1, 1, ""), Pci(1, 2, "usb"), Pci(1, 3, ""),
                                        Pci(2, 0, "virtio-disk0"), Pci(3, 0, "balloon0"), Pci(4, 0, "virtio-disk1"),
                                        Pci(5, 0, "net0")}}}});
  return {{"query-hotpluggable-cpus", cpus}, {"query-memory-devices", memory}, {"query-block", block}, {"query-pci", pci}};
}

SequenceGuest Guest() {
  SequenceGuest g;
  g.dir = "/g";
  return g;
}

ModelState Model() {
  ModelState m = InitialState();
  m.vcpus = 2;
  m.disk = m.nic = m.dimm = true;
  m.media = kImageA;
  m.balloon_mib = 320;
  return m;
}

std::string Problems(const std::string& xml, const json& qemu, const ModelState& m) {
  std::string all;
  for (const std::string& p : CompareLiveXml(xml, qemu, m, Guest())) all += p + "\n";
  return all;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

TEST(SequenceChecks, TheRecordedDomainAgreesWithItsModelAndItsQemu) {
  EXPECT_EQ(Problems(kXml, Qemu(), Model()), "");
  EXPECT_EQ(CompareBalloon(kXml, {{"actual", 335544320}}), "");
  const ModelState m = Model();
  EXPECT_EQ(CompareBalloon(kXml, {{"actual", 335544320}}, &m), "");
}

TEST(SequenceChecks, EachDisagreementIsNamed) {
  struct Case {
    std::string what, xml;
    json qemu;
    ModelState model;
    std::string want;
  };
  ModelState one_vcpu = Model();
  one_vcpu.vcpus = 1;
  ModelState no_nic = Model();
  no_nic.nic = false;
  ModelState ejected = Model();
  ejected.media = kEject;
  json cpu_gone = Qemu();
  cpu_gone["query-hotpluggable-cpus"][0].erase("qom-path");
  json no_dimm = Qemu();
  no_dimm["query-memory-devices"] = json::array();
  json other_file = Qemu();
  other_file["query-block"][1]["inserted"]["file"] = "/g/b.iso";
  json moved = Qemu();
  moved["query-pci"][0]["devices"][7]["slot"] = 6;
  json extra = Qemu();
  extra["query-pci"][0]["devices"].push_back(Pci(7, 0, "net1"));
  json failed = Qemu();
  failed["query-block"] = {{"error", "exit 1"}};
  for (const Case& c : std::vector<Case>{
           {"the model's vCPUs", kXml, Qemu(), one_vcpu, "model: the XML has 2 vCPUs plugged, the model 1"},
           {"the model's NIC", kXml, Qemu(), no_nic, "model: the NIC present"},
           {"the model's medium", kXml, Qemu(), ejected, "model: the cdrom holds '/g/a.iso', the model ''"},
           {"QEMU's vCPUs", kXml, cpu_gone, Model(), "qemu: 1 vCPUs plugged in QEMU, 2 in the XML"},
           {"QEMU's DIMM", kXml, no_dimm, Model(), "qemu: DIMMs in QEMU {}"},
           {"QEMU's medium", kXml, other_file, Model(), "qemu: drives in QEMU"},
           {"a PCI slot", kXml, moved, Model(), "qemu: PCI functions in QEMU"},
           {"a PCI device the XML lacks", kXml, extra, Model(), "00:07.0 net1"},
           {"a failed query", kXml, failed, Model(), "qemu: query-block answered"},
           {"the XML's DIMM", Replace(kXml, "<alias name=\"dimm0\"/>", "<alias name=\"dimm1\"/>"), Qemu(), Model(),
            "\"dimm1\":131072"},
           {"the XML's memory", Replace(kXml, "393216", "262144"), Qemu(), Model(), "model: <memory> is 262144 KiB"},
           {"broken XML", "<domain", Qemu(), Model(), "does not parse"},
       }) {
    const std::string p = Problems(c.xml, c.qemu, c.model);
    EXPECT_NE(p.find(c.want), std::string::npos) << c.what << ":\n" << p;
  }
  ModelState m = Model();
  EXPECT_NE(CompareBalloon(kXml, {{"actual", 268435456}}).find("QEMU's actual 262144 KiB, <currentMemory> 327680 KiB"),
            std::string::npos);
  m.balloon_mib = 384;
  EXPECT_EQ(CompareBalloon(kXml, {{"actual", 335544320}}, &m),
            "model: <currentMemory> is 327680 KiB, the balloon's target 384 MiB");
}

}  // namespace
}  // namespace qlaunch::testing::seq
