// attach-device / detach-device of a <memory model='dimm'> against libvirt 9.0: the same booted
// TCG guest (two NUMA cells on shared 2 MiB hugetlb memfds) runs under `virsh create` and then
// under `qlaunch start`; the same three DIMM files are attached one after the other, then
// detached in the same order:
//   shared   2 MiB pages bound to host node 0, guest node 1: a shared hugetlb memfd
//   private  access='private', guest node 1: a private hugetlb memfd, inherited page size
//   small    4 KiB pages, guest node 0: an ordinary shared memfd, no hugetlb
// After every step both QEMUs must report the same query-memory-devices (type, id, memdev, size,
// node, slot, addr, hotplugged, hotpluggable) and the same query-memdev (size, host-nodes, policy,
// share, merge, dump, reserve, prealloc but for the one difference below), the hugepage pool must
// have lost the same pages under both, the guest the same MemTotal; after the detaches both report
// no memory device and every page is back.
//
// The guest boots (tests/support/hotplug_guest.h): without a guest OS nobody answers the ACPI
// eject of a DIMM, so neither QEMU would ever send DEVICE_DELETED and no detach would complete.
// Its files live in a world-readable directory: libvirt's QEMU runs as libvirt-qemu.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "support/device_facts.h"
#include "support/hotplug_guest.h"
#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/libvirt.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t MiB = 1ull << 20;
constexpr const char* kDir = "/tmp/qlaunch-dimmdiff";
constexpr const char* kName = "dimmdiff";
constexpr uint64_t kPoolPages = 256;  // the cells' 128 pages, the shared and the private DIMM's 64 each

struct Dimm {
  const char* name;
  std::string xml;
  uint64_t pages;  // 2 MiB pages it takes from the pool
};

std::vector<Dimm> Dimms() {
  return {
      {"shared", "<memory model='dimm'>\n  <source><pagesize unit='KiB'>2048</pagesize><nodemask>0</nodemask></source>\n"
                 "  <target><size unit='MiB'>128</size><node>1</node></target>\n</memory>\n", 64},
      {"private", "<memory model='dimm' access='private'>\n  <target><size unit='MiB'>128</size><node>1</node></target>\n"
                  "</memory>\n", 64},
      {"small", "<memory model='dimm'>\n  <source><pagesize unit='KiB'>4</pagesize></source>\n"
                "  <target><size unit='MiB'>128</size><node>0</node></target>\n</memory>\n", 0},
  };
}

std::string DomainXml(const HotplugGuest& guest) {
  return std::string("<domain type='qemu'>\n  <name>") + kName + "</name>\n"
         "  <maxMemory slots='4' unit='MiB'>1024</maxMemory>\n  <memory unit='MiB'>256</memory>\n"
         "  <memoryBacking><hugepages/><source type='memfd'/><access mode='shared'/></memoryBacking>\n"
         "  <vcpu>1</vcpu>\n  <features><acpi/></features>\n"
         "  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n" +
         guest.OsXml("memhp_default_state=online_movable") + "  </os>\n"
         "  <cpu><numa><cell id='0' cpus='0' memory='128' unit='MiB'/><cell id='1' memory='128' unit='MiB'/></numa></cpu>\n"
         "  <devices>\n    <emulator>" + kQemu72 + "</emulator>\n" + guest.SerialXml() +
         "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
}

// Waits up to `limit` until `ok(read())`; the last value read.
template <typename T>
T WaitFor(const std::function<T()>& read, const std::function<bool(const T&)>& ok, std::chrono::seconds limit) {
  T v = read();
  for (auto end = std::chrono::steady_clock::now() + limit; !ok(v) && std::chrono::steady_clock::now() < end;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    v = read();
  }
  return v;
}

class AttachMemoryDifferentialTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (the hugepage pool, libvirt's qemu:///system)";
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    if (DefaultHugepageBytes() != 2 * MiB) GTEST_SKIP() << "this test assumes 2 MiB default hugepages";
  }
  void TearDown() override {
    if (pool_) {  // what is ours while we hold the pool's lock, which other runs of this test wait for
      Virsh({"destroy", kName});
      Qlaunch({"destroy", kName});
      std::error_code ec;
      fs::remove_all(kDir, ec);
      pool_.reset();
    }
    LaunchTest::TearDown();
  }

  // One launcher's run: start, wait for the guest, attach each DIMM, detach each; what it saw.
  using Run = std::function<RunResult(const std::vector<std::string>&)>;
  json Sequence(const Run& run, const std::vector<std::string>& attach, const std::vector<std::string>& detach,
                const HotplugGuest& guest) {
    const Monitor ask = MonitorOf(kName, run);
    auto devices = [&] { return Qmp(ask, "query-memory-devices"); };
    auto step = [&](const std::string& what) {
      json memdev = Qmp(ask, "query-memdev");
      if (memdev.is_array()) std::sort(memdev.begin(), memdev.end(), [](const json& a, const json& b) { return a["id"] < b["id"]; });
      return json{{"step", what}, {"devices", devices()}, {"memdev", memdev}, {"free", HugepagesFree()}};
    };
    const std::string booted = guest.Report("mem", [](const std::string&) { return true; }, std::chrono::seconds(120));
    EXPECT_FALSE(booted.empty()) << "the guest never reported its memory";
    const uint64_t base_kib = booted.empty() ? 0 : std::stoull(booted);
    json out = {{"steps", json::array({step("started")})}};
    for (const Dimm& d : Dimms()) {
      std::vector<std::string> args = attach;
      args.push_back((fs::path(kDir) / (std::string(d.name) + ".xml")).string());
      RunResult r = run(args);
      EXPECT_EQ(r.exit_code, 0) << "attach " << d.name << ": " << r.Describe();
      out["steps"].push_back(step(std::string("attach ") + d.name));
    }
    // The guest onlines all three (movable, so that it can give them back).
    out["mem_kib"] = guest.Report("mem", [&](const std::string& v) { return std::stoull(v) == base_kib + 3 * 128 * 1024; },
                                  std::chrono::seconds(60));
    uint64_t left = Dimms().size(), pages_held = 0;
    for (const Dimm& d : Dimms()) pages_held += d.pages;
    for (const Dimm& d : Dimms()) {
      std::vector<std::string> args = detach;
      args.push_back((fs::path(kDir) / (std::string(d.name) + ".xml")).string());
      RunResult r = run(args);
      EXPECT_EQ(r.exit_code, 0) << "detach " << d.name << ": " << r.Describe();
      --left;
      pages_held -= d.pages;
      // The device goes with DEVICE_DELETED; its pages when QEMU frees the backend's RAM block
      // (after an RCU grace period), which may come a little later under either launcher.
      WaitFor<json>(devices, [&](const json& v) { return v.is_array() && v.size() == left; }, std::chrono::seconds(30));
      const uint64_t want_free = kPoolPages - 128 - pages_held;
      WaitFor<uint64_t>([] { return HugepagesFree(); }, [&](const uint64_t& f) { return f == want_free; },
                        std::chrono::seconds(30));
      out["steps"].push_back(step(std::string("detach ") + d.name));
    }
    return out;
  }

  std::optional<HugepagePool> pool_;
};

TEST_F(AttachMemoryDifferentialTest, DimmsComeAndGoAsUnderLibvirt) {
  if (const std::string& why = LibvirtUnreachable(); !why.empty()) GTEST_SKIP() << why;
  pool_.emplace(HugepagePool::Exactly(kPoolPages));
  if (!pool_->ok()) GTEST_SKIP() << pool_->error();
  Virsh({"destroy", kName});  // a leftover of an aborted run
  fs::remove_all(kDir);
  fs::create_directories(kDir);
  fs::permissions(kDir, fs::perms(0755));
  HotplugGuest guest = MakeHotplugGuest(kDir);
  if (!guest.missing.empty()) GTEST_SKIP() << guest.missing;
  for (const fs::path& f : {guest.kernel, guest.initrd}) fs::permissions(f, fs::perms(0644));
  for (const Dimm& d : Dimms()) std::ofstream(fs::path(kDir) / (std::string(d.name) + ".xml")) << d.xml;
  HotplugGuest libvirt_guest = guest, our_guest = guest;  // one console log each
  libvirt_guest.serial = fs::path(kDir) / "libvirt-serial.log";
  our_guest.serial = fs::path(kDir) / "qlaunch-serial.log";

  const std::string libvirt_xml = (fs::path(kDir) / "libvirt.xml").string();
  std::ofstream(libvirt_xml) << DomainXml(libvirt_guest);
  RunResult created = Virsh({"create", libvirt_xml});
  ASSERT_EQ(created.exit_code, 0) << created.Describe();
  const json libvirt = Sequence([](const std::vector<std::string>& a) { return Virsh(a); },
                                {"attach-device", "--live", kName}, {"detach-device", "--live", kName}, libvirt_guest);
  Virsh({"destroy", kName});
  ASSERT_EQ(WaitFor<uint64_t>([] { return HugepagesFree(); }, [](const uint64_t& f) { return f == kPoolPages; },
                              std::chrono::seconds(30)),
            kPoolPages)
      << "libvirt's guest did not give its pages back";

  const std::string our_xml = (fs::path(kDir) / "qlaunch.xml").string();
  std::ofstream(our_xml) << DomainXml(our_guest);
  RunResult started = Qlaunch({"start", "--json", our_xml});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  const pid_t pid = json::parse(started.out).value("pid", 0);
  const json ours = Sequence([&](const std::vector<std::string>& a) { return Qlaunch(a); }, {"attach-device", kName},
                             {"detach-device", kName}, our_guest);
  EXPECT_EQ(Qlaunch({"destroy", kName}).exit_code, 0);
  ExpectHostClean(kName, pid, kPoolPages);

  // The one intended difference (docs/libvirt-differences.md, 7): qlaunch fills a shared hugetlb
  // memfd itself before QEMU sees it (add-fd, then object-add of a memory-backend-file on
  // /proc/self/fd/N with prealloc=false), at start for the cells and in attach-device for the
  // shared DIMM; libvirt has QEMU preallocate it (prealloc=true). The pool loses the same pages.
  // The private hugetlb DIMM is preallocated by QEMU under both, the 4 KiB one by neither.
  const std::set<std::string> filled_by_qlaunch = {"ram-node0", "ram-node1", "memdimm0"};
  const json& lsteps = libvirt["steps"];
  const json& osteps = ours["steps"];
  ASSERT_EQ(osteps.size(), lsteps.size());
  for (size_t i = 0; i < osteps.size(); ++i) {
    const std::string step = lsteps[i]["step"];
    EXPECT_EQ(osteps[i]["devices"], lsteps[i]["devices"])
        << step << ": query-memory-devices differs\n  libvirt: " << lsteps[i]["devices"].dump()
        << "\n  qlaunch: " << osteps[i]["devices"].dump();
    json want = lsteps[i]["memdev"];
    ASSERT_TRUE(want.is_array()) << step << ": " << want.dump();
    for (json& m : want) {
      if (!filled_by_qlaunch.contains(m.value("id", ""))) continue;
      EXPECT_EQ(m["prealloc"], true) << step << ": libvirt's QEMU did not preallocate " << m["id"];
      m["prealloc"] = false;
    }
    EXPECT_EQ(osteps[i]["memdev"], want) << step << ": query-memdev differs beyond prealloc of the filled memfds\n  libvirt: "
                                         << lsteps[i]["memdev"].dump() << "\n  qlaunch: " << osteps[i]["memdev"].dump();
    EXPECT_EQ(osteps[i]["free"], lsteps[i]["free"]) << step << ": free hugepages differ";
  }
  EXPECT_EQ(ours["mem_kib"], libvirt["mem_kib"]) << "the guests' MemTotal with all three DIMMs";

  // What the steps must show on both sides (so that two equal wrong answers fail too).
  for (const json* side : {&libvirt, &ours}) {
    const json& s = (*side)["steps"];
    const char* who = side == &libvirt ? "libvirt" : "qlaunch";
    EXPECT_EQ(s[0]["free"], kPoolPages - 128) << who;
    EXPECT_EQ(s[1]["free"], kPoolPages - 128 - 64) << who << ": the shared DIMM took 64 pages";
    EXPECT_EQ(s[2]["free"], kPoolPages - 128 - 128) << who << ": the private DIMM took 64 pages";
    EXPECT_EQ(s[3]["free"], kPoolPages - 128 - 128) << who << ": the 4 KiB DIMM took none";
    ASSERT_EQ(s[3]["devices"].size(), 3u) << who << ": " << s[3]["devices"].dump();
    for (unsigned slot = 0; slot < 3; ++slot) {
      const json& d = s[3]["devices"][slot]["data"];
      EXPECT_EQ(d["id"], "dimm" + std::to_string(slot)) << who;
      EXPECT_EQ(d["slot"], slot) << who;
      EXPECT_EQ(d["memdev"], "/objects/memdimm" + std::to_string(slot)) << who;
      EXPECT_EQ(d["size"], 128 * MiB) << who;
      EXPECT_EQ(d["hotplugged"], true) << who;
    }
    std::map<std::string, json> backend;
    for (const json& m : s[3]["memdev"]) {
      backend[m["id"]] = m;
      EXPECT_EQ(m["dump"], false) << who << ": " << m["id"] << " (dump-guest-core=off)";
    }
    EXPECT_EQ(backend["memdimm0"]["host-nodes"], json::array({0})) << who;
    EXPECT_EQ(backend["memdimm0"]["policy"], "bind") << who;
    EXPECT_EQ(backend["memdimm1"]["share"], false) << who;
    EXPECT_EQ(backend["memdimm1"]["prealloc"], true) << who << ": QEMU preallocates the private DIMM";
    EXPECT_EQ(backend["memdimm2"]["prealloc"], false) << who;
    EXPECT_EQ(s.back()["devices"], json::array()) << who << ": a memory device is left";
    EXPECT_EQ(s.back()["free"], kPoolPages - 128) << who << ": a page was not given back";
    EXPECT_EQ(s.back()["memdev"].size(), 2u) << who << ": " << s.back()["memdev"].dump();
  }
}

}  // namespace
}  // namespace qlaunch::testing
