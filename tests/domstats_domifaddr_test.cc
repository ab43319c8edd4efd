// domstats and domifaddr on a real QEMU 7.2 domain (TCG, pc: a virtio disk, an empty IDE cdrom,
// a NIC on user networking, one on a tap, a virtio balloon, the guest agent's channel):
// - `qlaunch domstats` gives what QEMU itself reports (query-balloon, query-cpus-fast,
//   query-blockstats, query-block), and the same field names as `virsh domstats` of the same XML
//   started under libvirt 9.0 (its groups state, balloon, vcpu, net, block);
// - `qlaunch domifaddr` (lease) the address QEMU's DHCP server gives a user NIC, and clear errors
//   for an unknown domain, a domain without an agent channel, and a guest without an agent;
// - `qlaunch domifaddr --source agent` against Debian's real qemu-ga in a booted busybox guest
//   (tests/boot/make-agent-initramfs) gives the address the guest took itself (its DHCP lease,
//   reported on its serial console); a guest that holds the agent's port open with nothing behind
//   it gets an error after the sync timeout, not a hang. The agent protocol against a stub agent
//   (stale output, silence, garbage, its error): launcher/lifecycle/observe/guest_agent_test.cc.
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "support/boot_kernel.h"
#include "support/launch_env.h"
#include "support/libvirt.h"
#include "support/slurp.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string DomainXml(const std::string& name, const fs::path& disk, const std::string& extra_devices) {
  return "<domain type='qemu'>\n  <name>" + name +
         "</name>\n  <memory unit='MiB'>96</memory>\n  <vcpu>2</vcpu>\n"
         "  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n  <devices>\n"
         "    <emulator>" + kQemu72 + "</emulator>\n"
         "    <disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='" + disk.string() +
         "'/><target dev='vda' bus='virtio'/></disk>\n"
         "    <disk type='file' device='cdrom'><target dev='hdc' bus='ide'/><readonly/></disk>\n"
         "    <interface type='user'><mac address='52:54:00:5a:00:01'/><model type='virtio'/></interface>\n"
         "    <memballoon model='virtio'/>\n" + extra_devices + "  </devices>\n</domain>\n";
}

// A NIC on a tap qlaunch makes (libvirt too), whose counters domstats reads.
std::string TapNic(const std::string& tap) {
  return "    <interface type='ethernet'><mac address='52:54:00:5a:00:02'/><target dev='" + tap +
         "'/><model type='virtio'/></interface>\n";
}

uint64_t TapCounter(const std::string& tap, const std::string& counter) {
  std::ifstream in("/sys/class/net/" + tap + "/statistics/" + counter);
  uint64_t v = 0;
  in >> v;
  return v;
}

const char* kAgentChannel =
    "    <channel type='unix'><source mode='bind'/><target type='virtio' name='org.qemu.guest_agent.0'/></channel>\n";

class DomstatsTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    disk_ = tmp() / "disk.raw";
    {
      std::ofstream d(disk_);
      d.seekp((1 << 20) - 1);
      d << '\0';
    }
    xml_ = (tmp() / "st.xml").string();
    std::ofstream(xml_) << DomainXml("st", disk_, std::string(kAgentChannel) + TapNic("tapst0"));
    RunResult r = Qlaunch({"start", "--json", xml_});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    pid_ = json::parse(r.out).at("pid").get<pid_t>();
  }
  void TearDown() override {
    if (pid_ > 0 && !PidGone(pid_)) Qlaunch({"destroy", "st"});
    LaunchTest::TearDown();
  }

  json Qmp(const std::string& command) {
    RunResult r = Qlaunch({"qemu-monitor-command", "st", json{{"execute", command}}.dump()});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return r.exit_code == 0 ? json::parse(r.out).at("return") : json();
  }
  json Domstats() {
    RunResult r = Qlaunch({"domstats", "--json", "st"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }

  fs::path disk_;
  std::string xml_;
  pid_t pid_ = 0;
};

TEST_F(DomstatsTest, FieldsAreWhatQemuReports) {
  auto stat = [](const json& list, const char* key) {
    for (const json& e : list)
      if (e.value("qdev", "").find("virtio-disk0") != std::string::npos) return e["stats"][key].get<uint64_t>();
    return uint64_t{0};
  };
  // SeaBIOS reads the virtio disk looking for a boot sector, soon after the start.
  for (int i = 0; i < 300 && stat(Qmp("query-blockstats"), "rd_operations") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const json before = Qmp("query-blockstats");
  const uint64_t tap_tx_before = TapCounter("tapst0", "tx_bytes"), tap_rx_before = TapCounter("tapst0", "rx_bytes");
  const json j = Domstats();
  const uint64_t tap_tx_after = TapCounter("tapst0", "tx_bytes"), tap_rx_after = TapCounter("tapst0", "rx_bytes");
  const json after = Qmp("query-blockstats");
  EXPECT_EQ(j.at("state.state"), 1);
  EXPECT_EQ(j.at("state.reason"), 1);
  EXPECT_EQ(j.at("balloon.maximum"), 96 * 1024);
  EXPECT_EQ(j.at("balloon.current"), Qmp("query-balloon").at("actual").get<uint64_t>() / 1024);
  EXPECT_EQ(j.at("balloon.last-update"), 0);  // no balloon driver in the guest
  EXPECT_GT(j.at("balloon.rss").get<uint64_t>(), 1024u);
  EXPECT_EQ(j.at("vcpu.current"), 2);
  EXPECT_EQ(j.at("vcpu.maximum"), 2);
  for (const char* n : {"0", "1"}) {
    EXPECT_EQ(j.at(std::string("vcpu.") + n + ".state"), 1) << n;
    EXPECT_TRUE(j.contains(std::string("vcpu.") + n + ".time")) << j.dump();
    EXPECT_TRUE(j.contains(std::string("vcpu.") + n + ".delay")) << j.dump();
  }
  EXPECT_EQ(j.at("net.count"), 2);
  EXPECT_FALSE(j.contains("net.0.name")) << "user networking has no tap (libvirt prints no fields for it)";
  EXPECT_EQ(j.at("net.1.name"), "tapst0");
  // The tap's counters, swapped to the guest's view: what the tap sent, the guest received.
  EXPECT_GE(j.at("net.1.rx.bytes").get<uint64_t>(), tap_tx_before);
  EXPECT_LE(j.at("net.1.rx.bytes").get<uint64_t>(), tap_tx_after);
  EXPECT_GE(j.at("net.1.tx.bytes").get<uint64_t>(), tap_rx_before);
  EXPECT_LE(j.at("net.1.tx.bytes").get<uint64_t>(), tap_rx_after);
  EXPECT_EQ(j.at("block.count"), 2);
  EXPECT_EQ(j.at("block.0.name"), "vda");
  EXPECT_EQ(j.at("block.0.path"), disk_.string());
  EXPECT_EQ(j.at("block.0.capacity"), 1 << 20);
  // The counters QEMU keeps, between what it said just before and just after.
  ASSERT_TRUE(before.is_array() && after.is_array());
  for (const auto& [field, key] : {std::pair{"block.0.rd.reqs", "rd_operations"}, {"block.0.rd.bytes", "rd_bytes"},
                                   {"block.0.wr.reqs", "wr_operations"}, {"block.0.fl.reqs", "flush_operations"}}) {
    EXPECT_GE(j.at(field).get<uint64_t>(), stat(before, key)) << field;
    EXPECT_LE(j.at(field).get<uint64_t>(), stat(after, key)) << field;
  }
  EXPECT_GT(j.at("block.0.rd.reqs").get<uint64_t>(), 0u);
  for (const json& b : Qmp("query-block")) {
    if (b.value("qdev", "").find("virtio-disk0") != std::string::npos) {
      EXPECT_EQ(j.at("block.0.physical"), b["inserted"]["image"]["actual-size"]);
    }
  }
  EXPECT_EQ(j.at("block.1.name"), "hdc");
  EXPECT_FALSE(j.contains("block.1.path")) << "an empty cdrom has no path";
  EXPECT_FALSE(j.contains("block.1.capacity"));

  // The text form: virsh's, the same fields in the same order.
  RunResult text = Qlaunch({"domstats", "st"});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_EQ(text.out.rfind("Domain: 'st'\n  state.state=1\n  state.reason=1\n  balloon.current=", 0), 0u) << text.out;
  EXPECT_EQ(text.out.substr(text.out.size() - 2), "\n\n");
  std::istringstream lines(text.out);
  std::string line;
  std::getline(lines, line);
  size_t fields = 0;
  while (std::getline(lines, line) && !line.empty()) {
    const std::smatch m = [&] {
      std::smatch mm;
      std::regex_match(line, mm, std::regex("  ([A-Za-z0-9._-]+)=(.*)"));
      return mm;
    }();
    ASSERT_FALSE(m.empty()) << line;
    EXPECT_TRUE(j.contains(m[1].str())) << line;
    ++fields;
  }
  EXPECT_EQ(fields, j.size());
}

TEST_F(DomstatsTest, PausedIsStateThreeReasonUser) {
  ASSERT_EQ(Qlaunch({"suspend", "st"}).exit_code, 0);
  const json j = Domstats();
  EXPECT_EQ(j.at("state.state"), 3);
  EXPECT_EQ(j.at("state.reason"), 1);
}

// The field names of the same XML under libvirt 9.0, group by group (values differ: another
// QEMU, another moment).
TEST_F(DomstatsTest, FieldNamesAsVirshDomstats) {
  if (const std::string& why = LibvirtUnreachable(); !why.empty()) GTEST_SKIP() << why;
  // Its own copy of the disk: QEMU locks an image it writes.
  const fs::path ldisk = tmp() / "disk-libvirt.raw";
  fs::copy_file(disk_, ldisk);
  const std::string lxml = (tmp() / "st-libvirt.xml").string();
  std::ofstream(lxml) << DomainXml("st-libvirt", ldisk, std::string(kAgentChannel) + TapNic("tapst1"));
  Virsh({"destroy", "st-libvirt"});
  RunResult created = Virsh({"create", lxml});
  ASSERT_EQ(created.exit_code, 0) << created.Describe();
  RunResult theirs = Virsh({"domstats", "--state", "--balloon", "--vcpu", "--interface", "--block", "st-libvirt"});
  Virsh({"destroy", "st-libvirt"});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.Describe();
  std::set<std::string> want;
  std::istringstream in(theirs.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  ", 0) == 0) want.insert(line.substr(2, line.find('=') - 2));
  const json ours = Domstats();
  std::set<std::string> got;
  for (const auto& [k, v] : ours.items()) got.insert(k);
  EXPECT_EQ(json(got), json(want)) << theirs.out;
}

TEST_F(DomstatsTest, DomifaddrLeaseAndClearErrors) {
  RunResult lease = Qlaunch({"domifaddr", "st"});
  ASSERT_EQ(lease.exit_code, 0) << lease.Describe();
  EXPECT_EQ(lease.out,
            " Name       MAC address          Protocol     Address\n" + std::string(79, '-') +
                "\n -          52:54:00:5a:00:01    ipv4         10.0.2.15/24\n\n");
  EXPECT_NE(lease.err.find("QEMU's user network reports no leases"), std::string::npos) << lease.Describe();
  RunResult lease_json = Qlaunch({"domifaddr", "--json", "--source", "lease", "st"});
  EXPECT_EQ(json::parse(lease_json.out),
            json::parse(R"([{"name":"-","mac":"52:54:00:5a:00:01","addresses":[
              {"protocol":"ipv4","address":"10.0.2.15","prefix":24}]}])"));

  // No guest OS: nobody opened the agent's port; said at once, as libvirt says it.
  const auto t0 = std::chrono::steady_clock::now();
  RunResult agent = Qlaunch({"domifaddr", "--source", "agent", "st"});
  EXPECT_EQ(agent.exit_code, 1) << agent.Describe();
  EXPECT_NE(agent.err.find("domain st: the guest agent is not connected (the guest has not opened its "
                           "org.qemu.guest_agent.0 port; is qemu-guest-agent running in the guest?)"),
            std::string::npos)
      << agent.Describe();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4));
  EXPECT_FALSE(PidGone(pid_)) << "a failed domifaddr must leave the guest alone";

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"domstats", "nosuch"}, {"domifaddr", "nosuch"}, {"domifaddr", "--source", "agent", "nosuch"}}) {
    RunResult r = Qlaunch(args);
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("domain nosuch is not running (qlaunch has no domain of that name"), std::string::npos)
        << r.Describe();
  }
  RunResult bad = Qlaunch({"domifaddr", "--source", "arp", "st"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();

  // A domain without an agent channel (on its own copy of the disk: QEMU locks an image it writes).
  const fs::path disk2 = tmp() / "disk2.raw";
  fs::copy_file(disk_, disk2);
  const std::string plain = (tmp() / "st2.xml").string();
  std::ofstream(plain) << DomainXml("st2", disk2, "");
  RunResult started = Qlaunch({"start", "--json", plain});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  RunResult none = Qlaunch({"domifaddr", "--source", "agent", "st2"});
  EXPECT_EQ(none.exit_code, 1) << none.Describe();
  EXPECT_NE(none.err.find("domain st2 has no guest agent channel (a <channel type='unix'> with <target type='virtio' "
                          "name='org.qemu.guest_agent.0'/>)"),
            std::string::npos)
      << none.Describe();
  EXPECT_EQ(Qlaunch({"destroy", "st2"}).exit_code, 0);
}

class GuestAgentTest : public LaunchTest {
 protected:
  void TearDown() override {
    if (started_) Qlaunch({"destroy", "agent"});
    LaunchTest::TearDown();
  }
  // Boots the busybox guest of tests/boot/make-agent-initramfs (kernel command line `extra`
  // added); "" when it cannot run here (then the test skips).
  std::string Boot(const std::string& extra) {
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) return why;
    if (::access("/usr/sbin/qemu-ga", X_OK) != 0) return "no /usr/sbin/qemu-ga (scripts/setup installs qemu-guest-agent)";
    const std::string kver = NewestKernelVersion();
    if (kver.empty()) return "no /boot/vmlinuz-* with its modules (scripts/setup installs linux-image-amd64)";
    const fs::path kernel = tmp() / "vmlinuz", initrd = tmp() / "initrd.gz", xml = tmp() / "agent.xml";
    serial_ = tmp() / "serial.log";
    fs::copy_file("/boot/vmlinuz-" + kver, kernel);
    const std::string make =
        std::string(QLAUNCH_SOURCE_DIR) + "/tests/boot/make-agent-initramfs " + kver + " " + initrd.string();
    EXPECT_EQ(std::system(make.c_str()), 0) << make;
    std::ofstream(xml) << "<domain type='qemu'>\n  <name>agent</name>\n  <memory unit='MiB'>256</memory>\n"
                          "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type>\n"
                          "    <kernel>" << kernel.string() << "</kernel><initrd>" << initrd.string() << "</initrd>\n"
                          "    <cmdline>console=ttyS0 quiet panic=-1 " << extra << "</cmdline></os>\n  <devices>\n"
                          "    <emulator>" << kQemu72 << "</emulator>\n"
                          "    <interface type='user'><mac address='52:54:00:ab:cd:01'/><model type='virtio'/>"
                          "</interface>\n"
                          "    <serial type='file'><source path='" << serial_.string() << "'/></serial>\n"
                       << kAgentChannel << "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    RunResult r = Qlaunch({"start", xml.string()});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    started_ = r.exit_code == 0;
    return "";  // a failed start is the test's failure (started_ false), not a skip
  }
  std::string Console() const { return fs::exists(serial_) ? Slurp(serial_.string()) : ""; }

  bool started_ = false;
  fs::path serial_;
};

// Debian's qemu-ga in a booted guest answers `qlaunch domifaddr --source agent` with the address
// the guest took from QEMU's DHCP server, as the guest itself reports it.
TEST_F(GuestAgentTest, RealAgentReportsTheGuestsOwnAddress) {
  if (std::string why = Boot(""); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(started_);

  // The guest boots under TCG, takes its lease and starts the agent: ask until it answers.
  RunResult agent;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  do {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    agent = Qlaunch({"domifaddr", "--source", "agent", "--json", "agent"});
  } while (agent.exit_code != 0 && std::chrono::steady_clock::now() < deadline);
  const std::string console = Console();
  const std::string tail = console.size() > 3000 ? console.substr(console.size() - 3000) : console;
  ASSERT_EQ(agent.exit_code, 0) << agent.Describe() << "\nconsole:\n" << tail;

  std::smatch lease;
  ASSERT_TRUE(std::regex_search(console, lease,
                                std::regex("QLAUNCH-AGENT: lease eth0 ([0-9.]+)/([0-9]+) ([0-9a-f:]+)")))
      << tail;
  const json rows = json::parse(agent.out);
  json eth0;
  for (const json& row : rows)
    if (row["name"] == "eth0") eth0 = row;
  ASSERT_TRUE(eth0.is_object()) << agent.out;
  EXPECT_EQ(eth0["mac"], lease[3].str());
  EXPECT_EQ(eth0["mac"], "52:54:00:ab:cd:01");
  bool found = false;
  for (const json& a : eth0["addresses"])
    found = found || (a["protocol"] == "ipv4" && a["address"] == lease[1].str() &&
                      std::to_string(a["prefix"].get<unsigned>()) == lease[2].str());
  EXPECT_TRUE(found) << agent.out << "\nlease: " << lease[0];

  RunResult table = Qlaunch({"domifaddr", "--source", "agent", "agent"});
  ASSERT_EQ(table.exit_code, 0) << table.Describe();
  EXPECT_NE(table.out.find("\n eth0       52:54:00:ab:cd:01    ipv4         " + lease[1].str() + "/" + lease[2].str() +
                           "\n"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("\n lo         00:00:00:00:00:00    ipv4         127.0.0.1/8\n"), std::string::npos)
      << table.out;

  // The lease source (what QEMU's DHCP server hands a user NIC: QEMU reports no leases, so
  // qlaunch names it as libvirt does) agrees with the address the guest really took.
  RunResult by_lease = Qlaunch({"domifaddr", "--json", "--source", "lease", "agent"});
  ASSERT_EQ(by_lease.exit_code, 0) << by_lease.Describe();
  const json leased = json::parse(by_lease.out);
  ASSERT_EQ(leased.size(), 1u) << by_lease.out;
  EXPECT_EQ(leased[0]["mac"], lease[3].str()) << by_lease.out;
  ASSERT_EQ(leased[0]["addresses"].size(), 1u) << by_lease.out;
  EXPECT_EQ(leased[0]["addresses"][0]["address"], lease[1].str()) << by_lease.out;
  EXPECT_EQ(std::to_string(leased[0]["addresses"][0]["prefix"].get<unsigned>()), lease[2].str()) << by_lease.out;

  // A booted guest has spent CPU time on its vCPU.
  RunResult stats = Qlaunch({"domstats", "--json", "agent"});
  ASSERT_EQ(stats.exit_code, 0) << stats.Describe();
  EXPECT_GT(json::parse(stats.out).at("vcpu.0.time").get<uint64_t>(), 0u);
}

// A guest that opened the agent's port with no agent behind it: an error naming the socket after
// the sync timeout (5 s), not a hang; the guest keeps running.
TEST_F(GuestAgentTest, AnAgentThatDoesNotAnswerIsAnErrorNotAHang) {
  if (std::string why = Boot("qlaunch.noagent"); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(started_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  while (Console().find("QLAUNCH-AGENT: port-held") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_NE(Console().find("QLAUNCH-AGENT: port-held"), std::string::npos) << Console();
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r = Qlaunch({"domifaddr", "--source", "agent", "agent"});
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_TRUE(std::regex_search(r.err, std::regex("domain agent: the guest agent does not answer on /[^ ]+ \\(no reply "
                                                  "to guest-sync-delimited within 5 s; is qemu-guest-agent running in "
                                                  "the guest\\?\\)")))
      << r.Describe();
  EXPECT_GE(took, std::chrono::seconds(5));
  EXPECT_LT(took, std::chrono::seconds(15));
  RunResult stats = Qlaunch({"domstats", "--json", "agent"});
  ASSERT_EQ(stats.exit_code, 0) << stats.Describe();
  EXPECT_EQ(json::parse(stats.out).at("state.state"), 1);
}

}  // namespace
}  // namespace qlaunch::testing
