// The device differential against libvirt 9.0. Every domain XML of the virt-install corpus
// (tests/fixtures/virtinst/*.xml, written by `virt-install --print-xml`, see its README) is
// started with `virsh create` and with `qlaunch start`, and what each QEMU itself reports over
// QMP must be the same: the device types of `info qtree` (a multiset; buses and addresses
// aside), query-block (file, format, read-only, removable), the query-chardev backends, each
// NIC's model and MAC (`info network`), `info usb`, query-vnc / query-spice (enabled, listen
// host, port), query-balloon, the vCPU count and query-memdev; and the PCI address and alias of
// every PCI device in the live XMLs (`virsh dumpxml` against `qlaunch dumpxml`). The differences we intend are
// numbered in docs/libvirt-differences.md and encoded below ("difference N"); anything else
// fails, with both sides' facts in the message.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launcher/lifecycle/change/pci_addresses_of.h"
#include "support/build_paths.h"
#include "support/device_facts.h"
#include "support/gtest_name.h"
#include "support/hardware.h"
#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/libvirt.h"
#include "support/qmp_facts.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path CorpusDir() { return fs::path(QLAUNCH_SOURCE_DIR) / "tests/fixtures/virtinst"; }
constexpr const char* kImages = "/tmp/qlaunch-virtinst";  // where the corpus's disks are

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(CorpusDir()))
    if (e.path().extension() == ".xml") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string DomainName(const std::string& xml) {
  std::smatch m;
  std::regex_search(xml, m, std::regex("<name>([^<]+)</name>"));
  return m[1];
}

// The corpus's bridge and named tap (pc-bridge-ethernet-user.xml).
constexpr const char* kBridge = "qlvi-br0";
constexpr const char* kNamedTap = "qlvi-tap0";

// What the host has of the domain's taps: the bridge's ports, and whether the named tap exists.
json HostTaps() {
  json out = {{"bridge_ports", 0}, {"named_tap", fs::exists(fs::path("/sys/class/net") / kNamedTap)}};
  std::error_code ec;
  for (auto it = fs::directory_iterator(fs::path("/sys/class/net") / kBridge / "brif", ec);
       !ec && it != fs::directory_iterator(); ++it)
    out["bridge_ports"] = out["bridge_ports"].get<int>() + 1;
  return out;
}

// A bridge made for one test and removed after it.
class TestBridge {
 public:
  TestBridge() {
    if (fs::exists(fs::path("/sys/class/net") / kBridge)) return;
    made_ = std::system((std::string("ip link add ") + kBridge + " type bridge && ip link set " + kBridge + " up").c_str()) == 0;
  }
  ~TestBridge() {
    if (made_) std::system((std::string("ip link del ") + kBridge).c_str());
  }
  bool ok() const { return fs::exists(fs::path("/sys/class/net") / kBridge); }

 private:
  bool made_ = false;
};

// The facts (support/device_facts.h) and what the host has of the domain's taps.
json Facts(const Monitor& ask) {
  json f = DeviceFacts(ask);
  f["host_taps"] = HostTaps();
  return f;
}

bool Has(const std::string& xml, const std::string& what) { return xml.find(what) != std::string::npos; }
bool HasAttr(const std::string& xml, const std::string& attr, const std::string& value) {
  return Has(xml, attr + "='" + value + "'") || Has(xml, attr + "=\"" + value + "\"");
}

// libvirt's side says something before it is compared: no question answered with an error, and
// each fact non-empty wherever the XML has what it is about (so a parser that stops matching
// cannot make both sides [] and equal).
void ExpectLibvirtFactsSaySomething(const std::string& file, const std::string& xml, const json& f) {
  SCOPED_TRACE(file + " under libvirt: " + f.dump());
  EXPECT_EQ(f["errors"], json::array());
  EXPECT_FALSE(f["qtree"].empty());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(xml, m, std::regex("<vcpu[^>]*>([0-9]+)</vcpu>")));
  EXPECT_EQ(f["vcpus"], json(std::stoul(m[1])));
  EXPECT_FALSE(f["memdev"].empty());
  if (Has(xml, "<disk ")) {
    EXPECT_FALSE(f["block"].empty());
  }
  if (Has(xml, "<interface ")) {
    EXPECT_FALSE(f["network"].empty());
  }
  if (Has(xml, "<serial") || Has(xml, "<console") || Has(xml, "<channel")) {
    EXPECT_FALSE(f["chardev"].empty());
  }
  if (HasAttr(xml, "bus", "usb") || Has(xml, "<redirdev")) {
    EXPECT_FALSE(f["usb"].empty());
  }
  EXPECT_EQ(f["vnc"].value("enabled", false), HasAttr(xml, "type", "vnc"));
  EXPECT_EQ(f["spice"].value("enabled", false), HasAttr(xml, "type", "spice"));
  if (HasAttr(xml, "memballoon model", "virtio")) {
    EXPECT_TRUE(f["balloon"].is_number());
  }
}

TEST(DeviceDifferential, CorpusHoldsItsFifteenFiles) {
  EXPECT_EQ(CorpusFiles().size(), 15u) << "tests/fixtures/virtinst/*.xml (see its README)";
}

class DeviceDifferentialTest : public LaunchTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // The corpus names its disks at a fixed path (virt-install wrote it): each case makes them, and
  // they go with the case (ctest runs one case a process), owners and all.
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(kImages, ec);
  }
};

TEST_P(DeviceDifferentialTest, QemuReportsTheSameDevicesAsUnderLibvirt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (libvirt's qemu:///system and qlaunch start)";
  if (const std::string& why = LibvirtUnreachable(); !why.empty()) GTEST_SKIP() << why;
  // Not a test of the accelerator: where KVM is missing, both sides get the same TCG copy.
  const fs::path xml_path = WithoutKvmWhereMissing(CorpusDir() / GetParam(), tmp() / "tcg");
  const std::string xml = Slurp(xml_path);
  const std::string name = DomainName(xml);
  RunResult images = RunningProcess({(CorpusDir() / "make-images").string(), kImages}, {}).Wait();
  ASSERT_EQ(images.exit_code, 0) << images.Describe();
  std::optional<TestBridge> bridge;
  if (xml.find(kBridge) != std::string::npos) {
    bridge.emplace();
    ASSERT_TRUE(bridge->ok()) << "cannot make the bridge " << kBridge;
  }
  const json taps_before = HostTaps();
  std::optional<HugepagePool> pool;
  if (xml.find("<hugepages") != std::string::npos) {
    pool.emplace(HugepagePool::AtLeast(600));
    if (!pool->ok()) GTEST_SKIP() << "cannot size the hugepage pool: " << pool->error();
  }

  // libvirt, paused: what QEMU reports does not depend on the guest running.
  Virsh({"destroy", name});  // a leftover of an aborted run
  RunResult created = Virsh({"create", "--paused", xml_path.string()});
  ASSERT_EQ(created.exit_code, 0) << created.Describe();
  json libvirt = Facts(MonitorOf(name, [](const std::vector<std::string>& args) { return Virsh(args); }));
  ExpectLibvirtFactsSaySomething(GetParam(), xml, libvirt);
  // The live XML of the running domain, whose PCI addresses `qlaunch dumpxml` must give too.
  RunResult libvirt_live = Virsh({"dumpxml", name});
  ASSERT_EQ(libvirt_live.exit_code, 0) << libvirt_live.Describe();
  RunResult destroyed = Virsh({"destroy", name});
  ASSERT_EQ(destroyed.exit_code, 0) << destroyed.Describe();

  // qlaunch, with QEMU preallocating as libvirt does (difference 7).
  RunResult started = Qlaunch({"start", "--prealloc", "qemu", xml_path.string()});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  json ours = Facts(MonitorOf(name, [this](const std::vector<std::string>& args) { return Qlaunch(args); }));
  RunResult our_live = Qlaunch({"dumpxml", name});
  EXPECT_EQ(our_live.exit_code, 0) << our_live.Describe();
  if (our_live.exit_code == 0) {
    // Each device's address and alias: "BB:SS.F alias".
    const auto want = launcher::PciAddressesOf(libvirt_live.out, "virsh dumpxml " + name, /*with_alias=*/true);
    const auto got = launcher::PciAddressesOf(our_live.out, "qlaunch dumpxml " + name, /*with_alias=*/true);
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(json(got), json(want)) << GetParam() << ": the PCI addresses (and aliases) of the live XMLs differ\n  virsh dumpxml:   "
                                     << json(want).dump() << "\n  qlaunch dumpxml: " << json(got).dump();
  }
  RunResult gone = Qlaunch({"destroy", name});
  ASSERT_EQ(gone.exit_code, 0) << gone.Describe();
  EXPECT_EQ(HostTaps(), taps_before) << "a tap qlaunch made outlived its domain";
  if (bridge) {  // and a start that fails once its taps exist leaves none behind
    RunResult failed = Qlaunch({"start", "--prealloc", "qemu", xml_path.string()}, {{"QLAUNCH_FAULT", "qmp"}});
    EXPECT_EQ(failed.exit_code, 1) << failed.Describe();
    EXPECT_EQ(HostTaps(), taps_before) << "a failed start left a tap";
    ExpectNothingLeft(name, HugepagesFree());
  }

  // Difference 8: the UEFI vars copy lives in qlaunch's own directory.
  for (json& b : libvirt["block"]) {
    std::string file = b["file"];
    if (file.starts_with("/var/lib/libvirt/qemu/nvram/"))
      b["file"] = "/var/lib/qlaunch/nvram/" + file.substr(std::string("/var/lib/libvirt/qemu/nvram/").size());
  }
  std::sort(libvirt["block"].begin(), libvirt["block"].end());
  for (const auto& [what, want] : libvirt.items()) {
    if (what == "qtree") {  // long lists: say what is missing on either side
      std::vector<std::string> a = want, b = ours[what], only_libvirt, only_qlaunch;
      std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_libvirt));
      std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_qlaunch));
      EXPECT_TRUE(only_libvirt.empty() && only_qlaunch.empty())
          << GetParam() << ": info qtree differs\n  only under libvirt: " << json(only_libvirt).dump()
          << "\n  only under qlaunch: " << json(only_qlaunch).dump();
      continue;
    }
    EXPECT_TRUE(ours[what] == want) << GetParam() << ": " << what << " differs\n  libvirt: " << want.dump()
                                    << "\n  qlaunch: " << ours[what].dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, DeviceDifferentialTest, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return GtestName(fs::path(info.param).stem().string());
                         });

}  // namespace
}  // namespace qlaunch::testing
