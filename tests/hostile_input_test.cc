// Over 400 lines for a reason: 32 short cases, one per kind of hostile or broken input, on one fixture.
// Hostile and broken domain XML at the command line. Each case runs the real binary twice,
// `qlaunch validate FILE` and `qlaunch start FILE` (temporary QLAUNCH_STATE_DIR), and expects
// exit 1 within a hang guard of 10 s, a message naming the file (and the line and element
// where there are ones), nothing on stdout, and the host as it was: no state dir entry, no
// QEMU, no memfd, the same free hugepages. The one valid case, a name full of QEMU option
// syntax, must reach real QEMU 7.2 as exactly that name.
// Over 400 lines for a reason: one case per kind of hostile input, each a few lines around the
// shared ExpectRefused, kept together so the list of what is refused reads in one place.
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "qemu_cmd/qmp_client.h"
#include "support/argv_parts.h"
#include "support/launch_env.h"
#include "support/qemu_opts_split.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

constexpr auto kHangGuard = std::chrono::seconds(10);  // not a performance bound: "it ends"
constexpr uint64_t kMemoryBound = 512ull << 20;

// A TCG domain of 128 MiB. Line 1 <domain>, 2 <name>, 3 <memory>, 4 <vcpu>, 5 <os>, then
// `extra` from line 6 on.
std::string Domain(const std::string& extra = "", const std::string& name = "hostile",
                   const std::string& memory = "<memory unit='MiB'>128</memory>") {
  return "<domain type='qemu'>\n"
         "  <name>" + name + "</name>\n"
         "  " + memory + "\n"
         "  <vcpu>2</vcpu>\n"
         "  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n" +
         (extra.empty() ? "" : extra + "\n") + "</domain>\n";
}

const std::string kTwoCells =
    "  <cpu><numa><cell id='0' cpus='0' memory='64' unit='MiB'/>"
    "<cell id='1' cpus='1' memory='64' unit='MiB'/></numa></cpu>";

class HostileInputTest : public LaunchTest {
 protected:
  std::string Write(const std::string& file, const std::string& bytes) {
    const fs::path path = tmp() / file;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }

  // Runs validate and start on `path`; both must refuse it with "PATH[:LINE]: error:
  // [<ELEMENT>: ]MESSAGE..." and leave the host as it was. Returns both results.
  std::vector<RunResult> ExpectRefused(const std::string& path, int line, const std::string& element,
                                       const std::string& message, const std::string& name = "hostile",
                                       const RunLimits& limits = {},
                                       const std::vector<std::string>& commands = {"validate", "start"}) {
    HugepagePool lock = HugepagePool::LockOnly();  // nobody else's test moves the pool meanwhile
    const uint64_t free_before = HugepagesFree();
    std::string want = path + (line > 0 ? ":" + std::to_string(line) : "") + ": error: ";
    if (!element.empty()) want += "<" + element + ">: ";
    want += message;
    std::vector<RunResult> results;
    for (const std::string& command : commands) {
      SCOPED_TRACE("qlaunch " + command);
      RunResult r = RunQlaunch({command, path}, BaseEnv(), kHangGuard, limits);
      EXPECT_FALSE(r.timed_out) << "did not finish within the hang guard\n" << r.Describe();
      EXPECT_EQ(r.exit_code, 1) << r.Describe();
      EXPECT_EQ(r.out, "") << r.Describe();
      EXPECT_NE(r.err.find(want), std::string::npos) << "expected: " << want << "\n" << r.Describe();
      ExpectNothingLeft(name, free_before);
      results.push_back(std::move(r));
    }
    return results;
  }
};

TEST_F(HostileInputTest, MalformedXml) {
  std::string xml = Domain();
  xml.replace(xml.find("<vcpu>2</vcpu>"), 14, "<vcpu>2</cpu>");
  ExpectRefused(Write("malformed.xml", xml), 4, "", "malformed XML: Opening and ending tag mismatch: vcpu line 4 and cpu");
}

TEST_F(HostileInputTest, EmptyFile) {
  ExpectRefused(Write("empty.xml", ""), 0, "", "file is empty; expected a libvirt <domain> XML document");
  ExpectRefused(Write("blank.xml", "\n  \n\t\n"), 0, "", "file is empty");
}

TEST_F(HostileInputTest, BinaryJunk) {
  // The start of an ELF executable: NUL bytes on line 1.
  const std::string elf = Slurp(QlaunchBinary()).substr(0, 4096);
  ASSERT_EQ(elf.rfind("\x7f" "ELF", 0), 0u);
  ExpectRefused(Write("elf.xml", elf), 1, "", "file contains binary data (NUL byte at offset ");
  // Junk without NUL bytes is malformed XML.
  ExpectRefused(Write("junk.xml", "}{ \x01\x02\x7f ][ not xml at all \xc3\x28"), 1, "", "malformed XML: ");
}

TEST_F(HostileInputTest, NotADomain) {
  ExpectRefused(Write("network.xml", "<network>\n  <name>default</name>\n</network>\n"), 1, "network",
                "root element is <network>, expected a libvirt <domain>");
}

TEST_F(HostileInputTest, UnknownUnit) {
  ExpectRefused(Write("unit.xml", Domain("", "hostile", "<memory unit='XB'>128</memory>")), 3, "memory",
                "unknown suffix 'XB' in unit attribute");
}

TEST_F(HostileInputTest, GarbageNumber) {
  ExpectRefused(Write("garbage.xml", Domain("", "hostile", "<memory unit='MiB'>12x</memory>")), 3, "memory",
                "Invalid value '12x' for element <memory>: expected a non-negative integer");
}

TEST_F(HostileInputTest, NegativeNumber) {
  ExpectRefused(Write("negative.xml", Domain("", "hostile", "<memory unit='MiB'>-128</memory>")), 3, "memory",
                "Invalid value '-128' for element <memory>: expected a non-negative integer");
}

TEST_F(HostileInputTest, CellsThatDoNotAddUp) {
  std::string cells = kTwoCells;
  cells.replace(cells.rfind("memory='64'"), 11, "memory='32'");
  ExpectRefused(Write("addup.xml", Domain(cells)), 3, "memory",
                "<memory> is 131072 KiB but the NUMA cells add up to 98304 KiB; set <memory> to 98304 KiB");
}

TEST_F(HostileInputTest, OverlappingCellCpus) {
  std::string cells = kTwoCells;
  cells.replace(cells.find("cpus='0'"), 8, "cpus='0-1'");
  ExpectRefused(Write("overlap.xml", Domain(cells)), 6, "cell", "NUMA cells 0 and 1 have overlapping vCPU ids (1)");
}

TEST_F(HostileInputTest, MemnodeNamingAMissingCell) {
  ExpectRefused(Write("memnode.xml", Domain(kTwoCells + "\n  <numatune><memnode cellid='2' mode='strict' nodeset='0'/></numatune>")),
                7, "memnode",
                "Argument 'cellid' in memnode element must correspond to existing guest's NUMA cell (cellid 2)");
}

TEST_F(HostileInputTest, PageNodesetNamingAMissingCell) {
  ExpectRefused(
      Write("pagenode.xml",
            Domain(kTwoCells + "\n  <memoryBacking><hugepages><page size='2' unit='MiB' nodeset='0-2'/></hugepages></memoryBacking>")),
      7, "page", "hugepages: node 2 not found");
}

// Planned against this host: `start` gets as far as probing QEMU (a QEMU that exits again).
TEST_F(HostileInputTest, HostNodeThatDoesNotExist) {
  if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  ExpectRefused(Write("hostnode.xml", Domain("  <numatune><memory mode='strict' nodeset='63'/></numatune>")), 6,
                "memory", "NUMA node 63 is unavailable");
}

TEST_F(HostileInputTest, UnsupportedHugepageSize) {
  if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  ExpectRefused(Write("page5m.xml", Domain("  <memoryBacking><hugepages><page size='5' unit='MiB'/></hugepages></memoryBacking>")),
                6, "page", "Unable to find any usable hugetlbfs mount for 5120 KiB");
  ExpectRefused(Write("page5m-memfd.xml", Domain("  <memoryBacking><hugepages><page size='5' unit='MiB'/></hugepages>"
                                                  "<source type='memfd'/><access mode='shared'/></memoryBacking>")),
                6, "page", "the host has no huge pages of 5120 KiB");
}

TEST_F(HostileInputTest, HugepagesWithAnonymousSource) {
  ExpectRefused(Write("anon.xml", Domain("  <memoryBacking><hugepages/><source type='anonymous'/></memoryBacking>")), 6,
                "source", "hugepages are not allowed with anonymous memory source");
}

TEST_F(HostileInputTest, ZeroAllocationThreads) {
  ExpectRefused(Write("threads0.xml", Domain("  <memoryBacking><allocation mode='immediate' threads='0'/></memoryBacking>")),
                6, "allocation", "allocation threads must be at least 1");
}

TEST_F(HostileInputTest, MissingMemory) {
  ExpectRefused(Write("nomemory.xml", Domain("", "hostile", "")), 1, "domain",
                "Memory size must be specified via <memory> or in the <numa> configuration");
}

// An external entity naming /etc/shadow (or a file we watch) is refused at its declaration and
// never opened: its content appears nowhere, and inotify sees no open of the watched file.
std::string EntityDoc(const std::string& target) {
  return "<?xml version='1.0'?>\n<!DOCTYPE domain [\n  <!ENTITY xxe SYSTEM 'file://" + target + "'>\n]>\n" +
         Domain("", "&xxe;");
}
constexpr const char* kEntityRefused = "DOCTYPE declares entity 'xxe': entity declarations are not allowed in domain XML";

// /etc/shadow, as root reads it (qlaunch start runs as root): none of its lines comes out. Only
// where this test can read the file itself can it tell whether a line leaked.
TEST_F(HostileInputTest, ExternalEntityNamingShadowLeaksNothing) {
  std::vector<std::string> lines;
  std::istringstream shadow(Slurp("/etc/shadow"));
  for (std::string line; std::getline(shadow, line);)
    if (!line.empty()) lines.push_back(line);
  if (lines.empty())
    GTEST_SKIP() << "/etc/shadow cannot be read as uid " << ::geteuid()
                 << ", so nothing could leak from it here (ExternalEntityIsRefusedAndNeverRead covers a file the test owns)";
  for (const RunResult& r : ExpectRefused(Write("xxe-shadow.xml", EntityDoc("/etc/shadow")), 3, "", kEntityRefused)) {
    for (const std::string& line : lines) {
      EXPECT_EQ(r.out.find(line), std::string::npos) << "a line of /etc/shadow in stdout";
      EXPECT_EQ(r.err.find(line), std::string::npos) << "a line of /etc/shadow in stderr";
    }
  }
}

TEST_F(HostileInputTest, ExternalEntityIsRefusedAndNeverRead) {
  const std::string message = kEntityRefused;
  const fs::path canary = tmp() / "canary";
  const std::string secret = "qlaunch-canary-9f1c2e";
  std::ofstream(canary) << secret << "\n";
  const std::string xml = Write("xxe-canary.xml", EntityDoc(canary.string()));
  int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, canary.c_str(), IN_OPEN | IN_ACCESS), 0);
  for (const RunResult& r : ExpectRefused(xml, 3, "", message)) {
    EXPECT_EQ(r.out.find(secret), std::string::npos);
    EXPECT_EQ(r.err.find(secret), std::string::npos);
  }
  alignas(inotify_event) char events[4096];
  ssize_t n = ::read(watch, events, sizeof events);
  EXPECT_TRUE(n < 0 && errno == EAGAIN) << "the entity's file was opened or read (" << n << " bytes of events)";
  ::close(watch);
}

// Ten levels of ten-fold entity references: refused at the first declaration, fast, in
// bounded memory (an address-space limit of 512 MiB; under ASan, whose shadow memory needs a
// larger address space, the peak resident set is checked instead).
TEST_F(HostileInputTest, BillionLaughsFailsFastInBoundedMemory) {
  std::string doc = "<?xml version='1.0'?>\n<!DOCTYPE domain [\n<!ENTITY lol 'lol'>\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = i == 1 ? "lol" : "lol" + std::to_string(i - 1);
    doc += "<!ENTITY lol" + std::to_string(i) + " '";
    for (int j = 0; j < 10; ++j) doc += "&" + prev + ";";
    doc += "'>\n";
  }
  doc += "]>\n" + Domain("", "&lol9;");
  RunLimits limits;
  if (!kAsan) limits.address_space_bytes = kMemoryBound;
  for (const RunResult& r : ExpectRefused(Write("laughs.xml", doc), 3, "", "DOCTYPE declares entity 'lol'", "hostile", limits))
    EXPECT_LT(static_cast<uint64_t>(r.max_rss_kib) * 1024, kMemoryBound) << r.Describe();
}

TEST_F(HostileInputTest, FileOverTheSizeCap) {
  std::string doc = Domain("<!--" + std::string(5 << 20, 'x') + "-->");
  RunLimits limits;
  if (!kAsan) limits.address_space_bytes = kMemoryBound;
  ExpectRefused(Write("huge.xml", doc), 0, "", "file is larger than the limit of 4194304 bytes", "hostile", limits);
}

TEST_F(HostileInputTest, EmptyName) {
  ExpectRefused(Write("noname.xml", Domain("", "")), 2, "name", "missing domain name", "noname");
  std::string self_closed = Domain("", "");
  self_closed.replace(self_closed.find("<name></name>"), 13, "<name/>");
  ExpectRefused(Write("selfclosed.xml", self_closed), 2, "name", "missing domain name", "noname");
}

TEST_F(HostileInputTest, NameOverTheLengthBound) {
  const std::string name(65, 'n');
  ExpectRefused(Write("longname.xml", Domain("", name)), 2, "name",
                "domain name '" + name + "' is longer than 64 characters", name);
}

TEST_F(HostileInputTest, NameWithSlash) {
  ExpectRefused(Write("slash.xml", Domain("", "x/../../etc")), 2, "name", "name x/../../etc cannot contain '/'",
                "x/../../etc");
}

TEST_F(HostileInputTest, NameWithLeadingDot) {
  ExpectRefused(Write("dotdot.xml", Domain("", "..")), 2, "name", "domain name '..' must not start with '.'", "..");
  ExpectRefused(Write("hidden.xml", Domain("", ".hidden")), 2, "name", "domain name '.hidden' must not start with '.'",
                ".hidden");
}

// A valid name that is QEMU option syntax: rendered escaped (commas doubled), accepted by real
// QEMU 7.2, which starts paused and reports exactly that name; `start` runs it and its state
// dir works with it; nothing is added to the command line.
// ---- one per device family: refused with file:line and element, nothing left behind -------
// (Line 6 is <devices>, line 7 the device.)
std::string Devices(const std::string& device) { return Domain("  <devices>\n    " + device + "\n  </devices>"); }

TEST_F(HostileInputTest, DiskPathWithCommasAndSpacesThatDoesNotExist) {
  // Not a file: start says so before anything is made (validate does not look at the host).
  const std::string src = (tmp() / "a, b,format=qcow2,file.driver=host_device.img").string();
  ExpectRefused(Write("d.xml", Devices("<disk type='file' device='disk'><source file='" + src +
                                       "'/><target dev='vda' bus='virtio'/></disk>")),
                7, "disk", src + ": No such file or directory", "hostile", {}, {"start"});
}

TEST_F(HostileInputTest, BridgeThatDoesNotExist) {
  ExpectRefused(Write("b.xml", Devices("<interface type='bridge'><source bridge='qlnobr0'/></interface>")), 7,
                "source", "bridge 'qlnobr0' does not exist", "hostile", {}, {"start"});
}

TEST_F(HostileInputTest, MacThatIsNotOne) {
  ExpectRefused(Write("m.xml", Devices("<interface type='user'><mac address='52:54:00:zz:00:01'/></interface>")), 7,
                "mac", "unable to parse mac address '52:54:00:zz:00:01'");
}

TEST_F(HostileInputTest, VncPortOutOfRange) {
  ExpectRefused(Write("p.xml", Devices("<graphics type='vnc' port='70000'/>")), 7, "graphics",
                "vnc port must be in range [5900,65535]");
}

TEST_F(HostileInputTest, TapNameTooLong) {
  ExpectRefused(Write("t.xml", Devices("<interface type='ethernet'><target dev='qlaunch-tap-name-too-long'/></interface>")),
                7, "target", "invalid tap name 'qlaunch-tap-name-too-long': it is longer than 15 bytes");
}

TEST_F(HostileInputTest, TwoDevicesOnOnePciAddress) {
  const std::string addr = "<address type='pci' domain='0' bus='0' slot='5' function='0'/>";
  ExpectRefused(Write("a.xml", Devices("<memballoon model='virtio'>" + addr + "</memballoon>\n    <rng model='virtio'>"
                                       "<backend model='random'>/dev/urandom</backend>" + addr + "</rng>")),
                8, "rng", "PCI address 0000:00:05.0 is already used by <memballoon>");
}

// A disk whose file name is full of QEMU option syntax reaches QEMU as exactly that file.
TEST_F(HostileInputTest, DiskPathWithOptionSyntaxReachesQemuExactly) {
  if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  const fs::path src = tmp() / "a, b,format=qcow2,file.driver=host_device {\"x\":1}.img";
  {
    std::ofstream f(src);
    f << "qlaunch";
  }
  fs::permissions(src, fs::perms::owner_read | fs::perms::owner_write);
  const std::string xml = Write("ok.xml", Devices("<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
                                                  "<source file='" + src.string() + "'/><target dev='vda' bus='virtio'/></disk>"));
  RunResult start = Qlaunch({"start", xml});
  ASSERT_EQ(start.exit_code, 0) << start.Describe();
  RunResult block = Qlaunch({"qemu-monitor-command", "hostile", R"({"execute":"query-block"})"});
  RunResult destroy = Qlaunch({"destroy", "hostile"});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  ASSERT_EQ(block.exit_code, 0) << block.Describe();
  nlohmann::json reply = nlohmann::json::parse(block.out);
  ASSERT_EQ(reply["return"].size(), 1u) << block.out;
  EXPECT_EQ(reply["return"][0]["inserted"]["file"], src.string()) << block.out;
  struct stat st {};
  ASSERT_EQ(::stat(src.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the image was not given back";
}

TEST_F(HostileInputTest, NameWithOptionSyntaxReachesQemuExactly) {
  if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  if (DefaultHugepageBytes() != (2u << 20)) GTEST_SKIP() << "this test assumes 2 MiB default hugepages";
  SmallDomain d;
  d.name = "x,debug-threads=on -device foo";
  d.cells = 1;
  const uint64_t pages = d.Bytes() / (2u << 20);
  HugepagePool pool = HugepagePool::AtLeast(pages + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string xml = WriteDomain(d);

  RunResult validate = Qlaunch({"validate", xml}, {}, kHangGuard);
  EXPECT_EQ(validate.exit_code, 0) << validate.Describe();

  // --prealloc qemu: an argv QEMU runs on its own (no memfds handed over by qlaunch).
  RunResult native = Qlaunch({"domxml-to-native", "--format", "json", "--prealloc", "qemu", xml}, {}, kHangGuard);
  ASSERT_EQ(native.exit_code, 0) << native.Describe();
  const std::vector<std::string> argv = nlohmann::json::parse(native.out)["argv"].get<std::vector<std::string>>();
  EXPECT_EQ(OptionValue(argv, "-name"), "guest=x,,debug-threads=on -device foo,debug-threads=on");
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(QemuOptsPairs(OptionValue(argv, "-name"), false), (Pairs{{"guest", d.name}, {"debug-threads", "on"}}));
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    EXPECT_FALSE(argv[i] == "-device" && argv[i + 1].rfind("foo", 0) == 0) << "an added -device foo";

  {  // QEMU itself, from exactly that argv (which has -S): paused, and it knows the name.
    const fs::path dir = DomainStateDir(d.name);
    fs::create_directories(dir);  // where the argv puts the QMP socket
    RunningProcess qemu(argv, {});
    auto qmp = qemu::QmpClient::Connect((dir / "qmp.sock").string(), std::chrono::seconds(30));
    qmp->Execute("qmp_capabilities");
    EXPECT_EQ(qmp->Execute("query-name")["name"], d.name);
    nlohmann::json status = qmp->Execute("query-status");
    EXPECT_EQ(status["status"], "prelaunch") << status.dump();
    EXPECT_EQ(status["running"], false) << status.dump();
    try {
      qmp->Execute("quit");
    } catch (const qemu::QmpError&) {  // it may close the socket before answering
    }
    qmp.reset();
    RunResult r = qemu.Wait(std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    fs::remove_all(dir);
  }
  EXPECT_EQ(HugepagesFree(), free_before);

  RunResult start = Qlaunch({"start", "--json", xml});
  ASSERT_EQ(start.exit_code, 0) << start.Describe();
  const pid_t pid = nlohmann::json::parse(start.out)["pid"].get<pid_t>();
  {
    auto qmp = qemu::QmpClient::Connect((DomainStateDir(d.name) / "qmp.sock").string(), std::chrono::seconds(30));
    qmp->Execute("qmp_capabilities");
    EXPECT_EQ(qmp->Execute("query-name")["name"], d.name);
    EXPECT_EQ(qmp->Execute("query-status")["status"], "running");
  }
  RunResult destroy = Qlaunch({"destroy", d.name});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  ExpectHostClean(d.name, pid, free_before);
}

}  // namespace
}  // namespace qlaunch::testing
