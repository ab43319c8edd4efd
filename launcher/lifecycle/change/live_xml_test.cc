#include "launcher/lifecycle/change/live_xml.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/diagnostic.h"
#include "domain/parser.h"
#include "domain/xml_doc.h"
#include "domain/xml_node.h"
#include "launcher/lifecycle/change/pci_addresses_of.h"
#include "launcher/lifecycle/start/inputs.h"
#include "qemu_cmd/planner.h"
#include "support/build_paths.h"
#include "support/gtest_name.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The n-th element named `name` under <devices> of a document (nullptr when there is none), and
// an attribute of it or of its first child `child`.
struct Found {
  std::string xml;
  domain::XmlDoc doc;
  explicit Found(std::string x) : xml(std::move(x)), doc(domain::XmlDoc::Parse(xml, "live.xml")) {}
  const xmlNode* Device(const std::string& name, size_t n = 0) const {
    for (const xmlNode* devices : domain::ElementChildren(doc.Root(), "devices")) {
      auto all = domain::ElementChildren(devices, name);
      if (n < all.size()) return all[n];
    }
    return nullptr;
  }
  std::string Attr(const std::string& name, size_t n, const std::string& child, const std::string& attr) const {
    const xmlNode* d = Device(name, n);
    if (!d) return "<no " + name + " #" + std::to_string(n) + ">";
    if (!child.empty()) {
      auto c = domain::ElementChildren(d, child);
      if (c.empty()) return "<no " + child + ">";
      d = c.front();
    }
    return domain::NodeAttr(d, attr).value_or("<no " + attr + ">");
  }
  size_t Count(const std::string& name) const {
    size_t n = 0;
    while (Device(name, n)) ++n;
    return n;
  }
};

json Pci(const std::string& bus, unsigned slot, unsigned function = 0, bool multi = false) {
  return {{"bus", bus}, {"slot", slot}, {"function", function}, {"multifunction", multi}};
}

using Props = std::vector<std::pair<std::string, std::string>>;

// A device record as plan.json holds it (qemu::ToJson): props as [[key, value], ...].
json Record(const std::string& element, int line, const std::string& driver, const std::string& id,
            json pci = nullptr, const Props& props = {}) {
  json kv = json::array();
  for (const auto& [k, v] : props) kv.push_back(json::array({k, v}));
  json r = {{"element", element}, {"line", line}, {"family", element}, {"driver", driver}, {"id", id}, {"props", kv}};
  if (!pci.is_null()) r["pci"] = pci;
  return r;
}

LiveXmlInput Input(const std::string& xml, json records, json devices = json::object()) {
  LiveXmlInput in;
  in.domain_xml = xml;
  in.file = "domain.xml";
  in.plan = {{"devices", std::move(records)}, {"memory_devices", json::array()}};
  in.devices = std::move(devices);
  return in;
}

// Line numbers below are those of the literal: line 1 is <domain>.
const char* kQ35 = R"(<domain type='qemu'>
  <name>t</name>
  <os><type machine='q35'>hvm</type></os>
  <devices>
    <disk type='file' device='disk'><source file='/d.qcow2'/><target dev='vda' bus='virtio'/></disk>
    <interface type='user'><model type='virtio'/></interface>
    <graphics type='vnc' autoport='yes'/>
    <serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
    <disk type='file' device='cdrom'><target dev='sda' bus='sata'/><address type='drive' controller='0' bus='0' target='0' unit='0'/></disk>
  </devices>
</domain>
)";

json Q35Records() {
  return json::array({
      Record("controller", 0, "pcie-root-port", "pci.1", Pci("pcie.0", 2, 0, true),
             Props{{"port", "0x10"}, {"chassis", "1"}}),
      Record("controller", 0, "pcie-root-port", "pci.2", Pci("pcie.0", 2, 1), Props{{"port", "0x11"}, {"chassis", "2"}}),
      Record("controller", 0, "virtio-serial-pci", "virtio-serial0", Pci("pci.2", 0)),
      Record("disk", 5, "virtio-blk-pci", "virtio-disk0", Pci("pci.3", 0)),
      Record("disk", 11, "ide-cd", "sata0-0-0", nullptr, Props{{"bus", "ide.0"}}),
      Record("interface", 6, "virtio-net-pci", "net0", Pci("pci.1", 0), Props{{"netdev", "hostnet0"}, {"mac", "52:54:00:aa:bb:cc"}}),
      Record("serial", 8, "isa-serial", "serial0", nullptr, Props{{"chardev", "charserial0"}, {"index", "0"}}),
      Record("channel", 10, "virtserialport", "channel0", nullptr,
             Props{{"bus", "virtio-serial0.0"}, {"nr", "1"}, {"chardev", "charchannel0"}}),
      Record("graphics", 7, "", ""),
      Record("memballoon", 0, "virtio-balloon-pci", "balloon0", Pci("pci.4", 0)),
      Record("video", 0, "cirrus-vga", "video0", Pci("pcie.0", 1)),
  });
}

TEST(LiveXml, DevicesGetTheirAliasAndAddress) {
  LiveXmlInput in = Input(kQ35, Q35Records(),
                          {{"graphics", {{{"type", "vnc"}, {"listen", "127.0.0.1"}, {"port", 5901}}}},
                           {"interfaces", {{{"type", "user"}, {"model", "virtio"}, {"mac", "52:54:00:aa:bb:cc"}, {"tap", ""}}}}});
  in.id = 4242;
  in.ptys = {{"charserial0", "/dev/pts/7"}};
  in.channel_dir = "/run/qlaunch/t/channel";
  Found f(LiveDomainXml(in));
  EXPECT_EQ(domain::NodeAttr(f.doc.Root(), "id").value_or(""), "4242");
  // The virtio disk: alias and the PCI address, bus as a number.
  EXPECT_EQ(f.Attr("disk", 0, "alias", "name"), "virtio-disk0");
  EXPECT_EQ(f.Attr("disk", 0, "address", "type"), "pci");
  EXPECT_EQ(f.Attr("disk", 0, "address", "domain"), "0x0000");
  EXPECT_EQ(f.Attr("disk", 0, "address", "bus"), "0x03");
  EXPECT_EQ(f.Attr("disk", 0, "address", "slot"), "0x00");
  EXPECT_EQ(f.Attr("disk", 0, "address", "function"), "0x0");
  // The cdrom keeps the XML's drive address.
  EXPECT_EQ(f.Attr("disk", 1, "alias", "name"), "sata0-0-0");
  EXPECT_EQ(f.Attr("disk", 1, "address", "type"), "drive");
  // The NIC: its MAC, its model, no tap on user networking.
  EXPECT_EQ(f.Attr("interface", 0, "mac", "address"), "52:54:00:aa:bb:cc");
  EXPECT_EQ(f.Attr("interface", 0, "alias", "name"), "net0");
  EXPECT_EQ(f.Attr("interface", 0, "address", "bus"), "0x01");
  EXPECT_EQ(f.Attr("interface", 0, "target", "dev"), "<no target>");
  // VNC: the port bound and where it listens.
  EXPECT_EQ(f.Attr("graphics", 0, "", "port"), "5901");
  EXPECT_EQ(f.Attr("graphics", 0, "", "autoport"), "yes");
  EXPECT_EQ(f.Attr("graphics", 0, "", "listen"), "127.0.0.1");
  EXPECT_EQ(f.Attr("graphics", 0, "listen", "address"), "127.0.0.1");
  // The serial and the console on it: one pty, the console's alias is the serial's.
  EXPECT_EQ(f.Attr("serial", 0, "", "tty"), "/dev/pts/7");
  EXPECT_EQ(f.Attr("serial", 0, "source", "path"), "/dev/pts/7");
  EXPECT_EQ(f.Attr("console", 0, "alias", "name"), "serial0");
  EXPECT_EQ(f.Attr("console", 0, "", "tty"), "/dev/pts/7");
  // The agent channel: its socket in the state dir, its virtio-serial port.
  EXPECT_EQ(f.Attr("channel", 0, "source", "path"), "/run/qlaunch/t/channel/org.qemu.guest_agent.0");
  EXPECT_EQ(f.Attr("channel", 0, "source", "mode"), "bind");
  EXPECT_EQ(f.Attr("channel", 0, "alias", "name"), "channel0");
  EXPECT_EQ(f.Attr("channel", 0, "address", "type"), "virtio-serial");
  EXPECT_EQ(f.Attr("channel", 0, "address", "controller"), "0");
  EXPECT_EQ(f.Attr("channel", 0, "address", "port"), "1");
  // The balloon the XML left out.
  EXPECT_EQ(f.Attr("memballoon", 0, "", "model"), "virtio");
  EXPECT_EQ(f.Attr("memballoon", 0, "alias", "name"), "balloon0");
  EXPECT_EQ(f.Attr("memballoon", 0, "address", "bus"), "0x04");
  // The cirrus adapter VNC implied, as libvirt lists it, before the balloon.
  EXPECT_EQ(f.Attr("video", 0, "model", "type"), "cirrus");
  EXPECT_EQ(f.Attr("video", 0, "model", "primary"), "yes");
  EXPECT_EQ(f.Attr("video", 0, "alias", "name"), "video0");
  EXPECT_EQ(f.Attr("video", 0, "address", "bus"), "0x00");
  EXPECT_EQ(f.Attr("video", 0, "address", "slot"), "0x01");
  EXPECT_LT(f.xml.find("<video>"), f.xml.find("<memballoon")) << f.xml;
}

TEST(LiveXml, ImpliedAndBuiltinControllersAreListed) {
  Found f(LiveDomainXml(Input(kQ35, Q35Records())));
  // pcie-root, sata0 (built in), two root ports, the virtio-serial controller.
  ASSERT_EQ(f.Count("controller"), 5u) << f.xml;
  std::map<std::string, const xmlNode*> by_alias;
  for (size_t i = 0; i < f.Count("controller"); ++i) by_alias[f.Attr("controller", i, "alias", "name")] = f.Device("controller", i);
  ASSERT_TRUE(by_alias.count("pci.1")) << f.xml;
  const xmlNode* port = by_alias["pci.1"];
  auto child_attr = [](const xmlNode* n, const char* child, const char* attr) {
    const auto c = domain::ElementChildren(n, child);
    return c.empty() ? std::string("<no ") + child + ">" : domain::NodeAttr(c[0], attr).value_or("<none>");
  };
  EXPECT_EQ(domain::NodeAttr(port, "type").value_or(""), "pci");
  EXPECT_EQ(domain::NodeAttr(port, "index").value_or(""), "1");
  EXPECT_EQ(domain::NodeAttr(port, "model").value_or(""), "pcie-root-port");
  EXPECT_EQ(child_attr(port, "model", "name"), "pcie-root-port");
  EXPECT_EQ(child_attr(port, "target", "chassis"), "1");
  EXPECT_EQ(child_attr(port, "target", "port"), "0x10");
  EXPECT_EQ(child_attr(port, "address", "multifunction"), "on");
  ASSERT_TRUE(by_alias.count("pcie.0"));
  EXPECT_EQ(domain::NodeAttr(by_alias["pcie.0"], "model").value_or(""), "pcie-root");
  EXPECT_TRUE(domain::ElementChildren(by_alias["pcie.0"], "address").empty());
  ASSERT_TRUE(by_alias.count("ide"));
  EXPECT_EQ(domain::NodeAttr(by_alias["ide"], "type").value_or(""), "sata");
  ASSERT_TRUE(by_alias.count("virtio-serial0"));
  EXPECT_EQ(domain::NodeAttr(by_alias["virtio-serial0"], "type").value_or(""), "virtio-serial");
  const auto pci = PciAddressesOf(f.xml, "live.xml");
  EXPECT_EQ(pci.at("controller type=sata index=0"), "00:1f.2");
  EXPECT_EQ(pci.at("controller type=pci index=2"), "00:02.1");
  EXPECT_EQ(pci.at("controller type=virtio-serial index=0"), "02:00.0");
  EXPECT_EQ(pci.at("disk#0"), "03:00.0");
  EXPECT_EQ(pci.count("disk#1"), 0u);  // the cdrom is on the SATA bus
  EXPECT_EQ(PciAddressesOf(f.xml, "live.xml", /*with_alias=*/true).at("disk#0"), "03:00.0 virtio-disk0");
}

TEST(LiveXml, PcMachineHasPciRootAndIdeWhenADiskIsOnIt) {
  const char* no_ide = R"(<domain type='qemu'><name>p</name><os><type machine='pc'>hvm</type></os>
<devices><controller type='pci' index='0' model='pci-root'/></devices></domain>)";
  Found without(LiveDomainXml(Input(no_ide, json::array())));
  ASSERT_EQ(without.Count("controller"), 1u) << without.xml;
  const char* xml = R"(<domain type='qemu'><name>p</name><os><type machine='pc'>hvm</type></os>
<devices><disk type='file' device='cdrom'><target dev='hdc'/></disk>
<controller type='pci' index='0' model='pci-root'/></devices></domain>)";
  Found f(LiveDomainXml(Input(xml, json::array())));
  ASSERT_EQ(f.Count("controller"), 2u) << f.xml;
  EXPECT_EQ(f.Attr("controller", 0, "alias", "name"), "pci.0");  // the XML's own, not a second one
  EXPECT_EQ(f.Attr("controller", 1, "", "type"), "ide");
  EXPECT_EQ(f.Attr("controller", 1, "address", "slot"), "0x01");
  EXPECT_EQ(f.Attr("controller", 1, "address", "function"), "0x1");
}

// USB companions (no id of their own) get their master's index and alias, as libvirt lists them.
TEST(LiveXml, UsbCompanionsShareTheirMastersIndex) {
  const char* xml = R"(<domain type='qemu'><name>u</name><os><type machine='q35'>hvm</type></os>
<devices>
<controller type='usb' model='ich9-ehci1'/>
<controller type='usb' model='ich9-uhci1'><master startport='0'/></controller>
</devices></domain>)";
  Found f(LiveDomainXml(Input(xml, json::array({Record("controller", 3, "ich9-usb-ehci1", "usb", Pci("pcie.0", 0x1d, 7)),
                                               Record("controller", 4, "ich9-usb-uhci1", "", Pci("pcie.0", 0x1d, 0, true),
                                                      Props{{"masterbus", "usb.0"}, {"firstport", "0"}})}))));
  EXPECT_EQ(f.Attr("controller", 0, "", "index"), "0");
  EXPECT_EQ(f.Attr("controller", 1, "", "index"), "0");
  EXPECT_EQ(f.Attr("controller", 1, "alias", "name"), "usb");
  EXPECT_EQ(f.Attr("controller", 1, "address", "multifunction"), "on");
  const auto pci = PciAddressesOf(f.xml, "live.xml");
  EXPECT_EQ(pci.at("controller type=usb index=0"), "00:1d.7");
  EXPECT_EQ(pci.at("controller type=usb index=0/0"), "00:1d.0");
}

TEST(LiveXml, TapsAndMemoryDevices) {
  const char* xml = R"(<domain type='qemu'><name>m</name>
<devices>
<interface type='bridge'><source bridge='br0'/><model type='e1000'/></interface>
<memory model='dimm'><target><size unit='MiB'>128</size><node>0</node></target></memory>
</devices></domain>)";
  LiveXmlInput in = Input(xml, json::array({Record("interface", 3, "e1000", "net0", Pci("pci.0", 3), Props{{"mac", "52:54:00:01:02:03"}})}),
                          {{"interfaces", {{{"type", "bridge"}, {"model", "e1000"}, {"mac", "52:54:00:01:02:03"}, {"tap", "vnet3"}}}}});
  in.plan["memory_devices"] = {{{"driver", "pc-dimm"}, {"id", "dimm0"}, {"memdev", "memdimm0"}, {"node", 0}, {"slot", 0}}};
  in.dimm_bases = {{"dimm0", 0x100000000ull}};
  Found f(LiveDomainXml(in));
  EXPECT_EQ(f.Attr("interface", 0, "target", "dev"), "vnet3");
  EXPECT_EQ(f.Attr("interface", 0, "source", "bridge"), "br0");
  EXPECT_EQ(f.Attr("interface", 0, "mac", "address"), "52:54:00:01:02:03");
  EXPECT_EQ(f.Attr("memory", 0, "alias", "name"), "dimm0");
  EXPECT_EQ(f.Attr("memory", 0, "address", "type"), "dimm");
  EXPECT_EQ(f.Attr("memory", 0, "address", "slot"), "0");
  EXPECT_EQ(f.Attr("memory", 0, "address", "base"), "0x100000000");
}

// virsh dumpxml always shows <currentMemory>: the balloon's actual size while one reports it.
TEST(LiveXml, CurrentMemoryIsTheBalloonsActualSize) {
  const char* xml = "<domain type='qemu'><name>b</name><memory unit='MiB'>256</memory><devices/></domain>";
  LiveXmlInput in = Input(xml, json::array());
  const std::string given = LiveDomainXml(in);
  const size_t memory = given.find("<memory unit=\"MiB\">256</memory>");
  ASSERT_NE(memory, std::string::npos) << given;
  EXPECT_EQ(given.find("<currentMemory unit=\"MiB\">256</currentMemory>"), given.find('<', given.find("</memory>", memory) + 1)) << "right after it";
  in.balloon_bytes = 200ull << 20;
  const std::string ballooned = LiveDomainXml(in);
  EXPECT_NE(ballooned.find("<currentMemory unit=\"KiB\">204800</currentMemory>"), std::string::npos) << ballooned;
  EXPECT_EQ(ballooned.find("currentMemory", ballooned.find("</currentMemory>") + 3), std::string::npos) << "one element";
  in.domain_xml = "<domain type='qemu'><name>b</name><memory unit='MiB'>256</memory>"
                  "<currentMemory unit='MiB'>128</currentMemory><devices/></domain>";
  in.balloon_bytes.reset();
  EXPECT_NE(LiveDomainXml(in).find("<currentMemory unit=\"MiB\">128</currentMemory>"), std::string::npos);
}

TEST(LiveXml, RefusesWhatItCannotRead) {
  LiveXmlInput old = Input(kQ35, json::array());
  old.plan = {{"argv", json::array()}};  // a plan.json written before dumpxml existed
  try {
    LiveDomainXml(old);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--inactive"), std::string::npos) << e.what();
  }
  EXPECT_THROW(LiveDomainXml(Input("<domain><devices>", json::array())), DiagnosticError);
}

// ---- the round trip on the planner: the live XML plans to the same devices ----------------

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

qemu::LaunchPlan PlanOf(const std::string& xml, const std::string& file) {
  const domain::DomainDef def = domain::ParseDomainXml(xml, file);
  const fs::path src = QLAUNCH_SOURCE_DIR;
  static const numa::HostTopology host = LoadHost((src / "tests/fixtures/hosts/two-node").string());
  static const qemu::QemuCaps caps = LoadCaps(kDefaultEmulator, (src / "tests/fixtures/caps/qemu-7.2.json").string());
  return qemu::PlanLaunch(def, host, caps, DefaultPlanOptions(def.name, qemu::PreallocMode::kQemu));
}

// What a device is to QEMU: driver, id, properties, PCI address (not the XML line it came from).
std::vector<json> DevicesToQemu(const qemu::LaunchPlan& plan) {
  std::vector<json> out;
  const json whole = qemu::ToJson(plan);  // kept: a range over a temporary's member dangles
  for (json d : whole["devices"]) {
    d.erase("line");
    out.push_back(d);
  }
  return out;
}

class LiveXmlRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(LiveXmlRoundTrip, LiveXmlPlansToTheSameDevicesAndAddresses) {
  const fs::path file = fs::path(QLAUNCH_SOURCE_DIR) / GetParam();
  const std::string xml = ReadFile(file);
  const qemu::LaunchPlan plan = PlanOf(xml, file.string());
  LiveXmlInput in;
  in.domain_xml = xml;
  in.file = file.string();
  in.plan = qemu::ToJson(plan);
  in.id = 1;
  const std::string live = LiveDomainXml(in);
  const qemu::LaunchPlan again = PlanOf(live, "live.xml");
  EXPECT_EQ(DevicesToQemu(again), DevicesToQemu(plan)) << live;
  // Every device with a PCI address in the plan has it in the live XML, and the only other one is
  // the machine's built-in SATA or IDE controller (no -device).
  auto pci = PciAddressesOf(live, "live.xml");
  pci.erase("controller type=sata index=0");
  pci.erase("controller type=ide index=0");
  EXPECT_EQ(pci.size(), std::count_if(plan.devices.begin(), plan.devices.end(),
                                      [](const auto& d) { return d.slot.has_value(); }))
      << live;
  // Nothing of the live XML is news to the parser: no warning the XML as given did not have.
  EXPECT_EQ(domain::ParseDomainXml(live, "live.xml").warnings.size(), domain::ParseDomainXml(xml, "x").warnings.size())
      << live;
}

// Every XML of the virt-install corpus (tests/fixtures/virtinst) and the complete example.
std::vector<std::string> RoundTripFiles() {
  std::vector<std::string> out = {"examples/complete-guest.xml"};
  for (const auto& e : fs::directory_iterator(fs::path(QLAUNCH_SOURCE_DIR) / "tests/fixtures/virtinst"))
    if (e.path().extension() == ".xml") out.push_back("tests/fixtures/virtinst/" + e.path().filename().string());
  std::sort(out.begin() + 1, out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, LiveXmlRoundTrip, ::testing::ValuesIn(RoundTripFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return qlaunch::testing::GtestName(fs::path(info.param).stem().string());
                         });

}  // namespace
}  // namespace qlaunch::launcher
