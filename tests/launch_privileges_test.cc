// QEMU never runs as root (docs/security.md): on real QEMU 7.2, as root, a domain with a
// root-owned 0600 disk image runs as ids of its own (leased) with no capabilities, opens the image (QMP
// query-block), and the image is root:root 0600 again after destroy, after each failed start,
// and after kill -9 of QEMU followed by `qlaunch list`. A read-only image shared by two domains
// gets a group of its own that both are in, and keeps it while either runs. Another user can neither connect to the QMP socket nor
// read the state dir. --user and a DAC <seclabel> choose the user; root only when named.
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fstream>

#include "launcher/host/uid_lease.h"
#include "qemu_cmd/qmp_client.h"
#include "support/hardware.h"
#include "support/launch_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> Cgroup2MountForTest() {
  std::ifstream in("/proc/self/mounts");
  for (std::string dev, dir, type, rest; in >> dev >> dir >> type && std::getline(in, rest);)
    if (type == "cgroup2") return fs::path(dir);
  return std::nullopt;
}

class LaunchPrivilegesTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: QEMU's user is only switched by a root qlaunch";
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    ASSERT_NE(::getpwnam("qlaunch-qemu"), nullptr) << "scripts/setup creates the qlaunch-qemu user";
    images_ = tmp() / "images";
    fs::create_directories(images_);
    fs::permissions(images_, fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
  }

  // A root-owned image of `mode` (1 MiB of zeros).
  fs::path Image(const std::string& name, mode_t mode = 0600, const fs::path& dir = {}) {
    fs::path p = (dir.empty() ? images_ : dir) / name;
    std::ofstream(p).close();
    fs::resize_file(p, 1 << 20);
    ::chown(p.c_str(), 0, 0);
    ::chmod(p.c_str(), mode);
    return p;
  }

  std::string DiskXml(const std::string& name, const fs::path& image, bool readonly,
                      const std::string& extra = "") {
    std::string xml = "<domain type='qemu'>\n  <name>" + name + "</name>\n  <memory unit='MiB'>64</memory>\n"
                      "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n" + extra +
                      "  <devices>\n    <emulator>" + kQemu72 + "</emulator>\n"
                      "    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw'/>\n"
                      "      <source file='" + image.string() + "'/>\n      <target dev='vda' bus='virtio'/>\n" +
                      (readonly ? "      <readonly/>\n" : "") + "    </disk>\n    <memballoon model='none'/>\n"
                      "  </devices>\n</domain>\n";
    fs::path f = tmp() / (name + ".xml");
    std::ofstream(f) << xml;
    return f.string();
  }

  pid_t Start(const std::string& xml, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"start", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(xml);
    RunResult r = Qlaunch(args);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (r.exit_code != 0) return 0;
    return nlohmann::json::parse(r.out).at("pid").get<pid_t>();
  }

  static std::string Owner(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return "missing";
    const passwd* pw = ::getpwuid(st.st_uid);
    const group* gr = ::getgrgid(st.st_gid);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    return (pw ? std::string(pw->pw_name) : "+" + std::to_string(st.st_uid)) + ":" +
           (gr ? std::string(gr->gr_name) : "+" + std::to_string(st.st_gid)) + " " + mode;
  }

  // The owner a file has while the QEMU of `pid` has it: its leased uid and gid ("+N:+N").
  static std::string Leased(pid_t pid) {
    const std::string id = QemuIdOf(pid);
    return "+" + id + ":+" + id;
  }

  // QEMU's own view of its disk: query-block over the domain's QMP socket.
  nlohmann::json QueryBlock(const std::string& name) {
    auto qmp = qemu::QmpClient::Connect((DomainStateDir(name) / "qmp.sock").string(), std::chrono::seconds(10));
    qmp->Execute("qmp_capabilities", nullptr, std::chrono::seconds(10));
    return qmp->Execute("query-block", nullptr, std::chrono::seconds(10));
  }

  fs::path images_;
};

TEST_F(LaunchPrivilegesTest, ARootOnlyImageIsGivenToQemuAndBack) {
  fs::path image = Image("root-only.img");
  ASSERT_EQ(Owner(image), "root:root 0600");
  pid_t pid = Start(DiskXml("priv-disk", image, false));
  ASSERT_GT(pid, 0);
  ExpectUnprivileged(pid);
  EXPECT_EQ(Owner(image), Leased(pid) + " 0600");
  nlohmann::json blocks = QueryBlock("priv-disk");
  bool found = false;
  for (const auto& b : blocks) {
    if (!b.contains("inserted")) continue;
    found |= b["inserted"].value("file", "") == image.string();
    EXPECT_FALSE(b["inserted"].value("ro", true)) << b.dump();
  }
  EXPECT_TRUE(found) << "QEMU did not open " << image << ": " << blocks.dump();

  RunResult destroy = Qlaunch({"destroy", "priv-disk"});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  ExpectHostClean("priv-disk", pid, HugepagesFree());
}

TEST_F(LaunchPrivilegesTest, EveryFailedStartGivesTheImageBack) {
  fs::path image = Image("failing.img");
  const std::string xml = DiskXml("priv-fault", image, false);
  for (const char* phase : {"preflight", "spawn", "qmp", "prealloc", "cont"}) {
    SCOPED_TRACE(phase);
    RunResult r = Qlaunch({"start", xml}, {{"QLAUNCH_FAULT", phase}});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("fault injected at phase " + std::string(phase)), std::string::npos) << r.Describe();
    EXPECT_EQ(Owner(image), "root:root 0600");
    ExpectNothingLeft("priv-fault", HugepagesFree());
  }
}

TEST_F(LaunchPrivilegesTest, AKilledQemuGivesTheImageBackAtTheNextList) {
  fs::path image = Image("killed.img");
  pid_t pid = Start(DiskXml("priv-kill", image, false));
  ASSERT_GT(pid, 0);
  const std::string leased = Leased(pid);
  EXPECT_EQ(Owner(image), leased + " 0600");
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 500 && !PidGone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Owner(image), leased + " 0600") << "nobody has looked yet";
  RunResult list = Qlaunch({"list", "--json"});
  EXPECT_EQ(list.out, "[]\n") << list.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  EXPECT_FALSE(fs::exists(DomainStateDir("priv-kill")));
  EXPECT_FALSE(launcher::IdLeased(static_cast<uint32_t>(std::stoul(leased.substr(1)))))
      << "the killed domain's uid is released with its state";
}

// Whether the ids of the QEMU of `pid` (uid, gid, supplementary groups: setpriv to them, as that
// QEMU reopening its disk by path would be) can open `path` read-only and read from it.
bool OpensAs(pid_t pid, const fs::path& path) {
  std::vector<std::string> argv = SetprivTo(pid);
  for (const std::string& a :
       std::vector<std::string>{"/usr/bin/dd", "if=" + path.string(), "of=/dev/null", "bs=4096", "count=1", "status=none"})
    argv.push_back(a);
  RunResult r = RunningProcess(argv, {}).Wait(std::chrono::seconds(30));
  return r.exit_code == 0;
}

// Two domains of their own ids on one read-only image: the first keeps owning it, the second
// reads it through a group leased for the file; each QEMU's ids can open it by path (a block
// reopen) for as long as it runs, whichever domain goes first, and the last one gives it back.
TEST_F(LaunchPrivilegesTest, ASharedReadOnlyImageKeepsItsLabelWhileADomainUsesIt) {
  for (const bool first_goes_first : {true, false}) {
    SCOPED_TRACE(first_goes_first ? "the first domain goes first" : "the second domain goes first");
    fs::path image = Image("shared-ro.img", 0640);
    pid_t a = Start(DiskXml("priv-ro-a", image, true));
    pid_t b = Start(DiskXml("priv-ro-b", image, true));
    ASSERT_GT(a, 0);
    ASSERT_GT(b, 0);
    ASSERT_NE(QemuIdOf(a), QemuIdOf(b));
    struct stat st {};
    ASSERT_EQ(::stat(image.c_str(), &st), 0);
    const std::string group = std::to_string(st.st_gid);
    EXPECT_EQ(Owner(image), "+" + QemuIdOf(a) + ":+" + group + " 0640") << "a keeps it, b reads through the group";
    EXPECT_TRUE(launcher::IdLeased(st.st_gid)) << group;
    EXPECT_NE(group, QemuIdOf(a));
    EXPECT_NE(group, QemuIdOf(b));
    EXPECT_NE((" " + ProcStatus(b)["Groups"] + " ").find(" " + group + " "), std::string::npos) << ProcStatus(b)["Groups"];
    EXPECT_TRUE(OpensAs(a, image)) << "a's QEMU can reopen its image by path";
    EXPECT_TRUE(OpensAs(b, image)) << "b's QEMU can open it by path";
    for (const char* name : {"priv-ro-a", "priv-ro-b"})
      for (const auto& blk : QueryBlock(name))
        if (blk.contains("inserted")) {
          EXPECT_TRUE(blk["inserted"].value("ro", false)) << name << blk.dump();
        }

    const std::string gone = first_goes_first ? "priv-ro-a" : "priv-ro-b";
    const pid_t stays = first_goes_first ? b : a;
    EXPECT_EQ(Qlaunch({"destroy", gone}).exit_code, 0);
    EXPECT_FALSE(PidGone(stays));
    EXPECT_EQ(Owner(image), (first_goes_first ? "root" : "+" + QemuIdOf(a)) + ":+" + group + " 0640")
        << "the other domain still uses it; no uid of a domain that went owns it";
    EXPECT_TRUE(OpensAs(stays, image)) << "the domain that stays can still open it by path";
    EXPECT_EQ(Qlaunch({"destroy", first_goes_first ? "priv-ro-b" : "priv-ro-a"}).exit_code, 0);
    EXPECT_EQ(Owner(image), "root:root 0640") << "the last domain gives it back, with the first owner";
    EXPECT_FALSE(launcher::IdLeased(st.st_gid)) << "the shared group goes with the last user";
  }
}

// change-media of a running domain onto an image another domain of its own ids uses: the same
// rule as a start (the image keeps its owner, a group leased for it), but a running QEMU cannot
// join a group, so its uid gets an ACL entry; both QEMUs' ids open it by path, and the entry,
// the group and the owner all go back with the last user.
TEST_F(LaunchPrivilegesTest, ChangeMediaOntoAnImageAnotherDomainUsesSharesIt) {
  fs::path image = Image("shared-cd.img", 0640);
  pid_t a = Start(DiskXml("priv-cd-a", image, true));
  ASSERT_GT(a, 0);
  const fs::path d_xml = tmp() / "priv-cd-d.xml";
  std::ofstream(d_xml) << "<domain type='qemu'>\n  <name>priv-cd-d</name>\n  <memory unit='MiB'>64</memory>\n"
                          "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='q35'>hvm</type></os>\n"
                          "  <devices>\n    <emulator>" << kQemu72 << "</emulator>\n"
                          "    <disk type='file' device='cdrom'>\n      <driver name='qemu' type='raw'/>\n"
                          "      <target dev='sda' bus='sata'/>\n      <readonly/>\n    </disk>\n"
                          "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
  pid_t d = Start(d_xml.string());
  ASSERT_GT(d, 0);
  const std::string d_groups = ProcStatus(d)["Groups"];
  RunResult change = Qlaunch({"change-media", "priv-cd-d", "sda", image.string(), "--insert"});
  ASSERT_EQ(change.exit_code, 0) << change.Describe();
  struct stat st {};
  ASSERT_EQ(::stat(image.c_str(), &st), 0);
  const std::string group = std::to_string(st.st_gid);
  EXPECT_EQ(Owner(image), "+" + QemuIdOf(a) + ":+" + group + " 0640") << "a keeps it, as when d had started on it";
  EXPECT_TRUE(launcher::IdLeased(st.st_gid)) << group;
  EXPECT_NE(group, QemuIdOf(a));
  EXPECT_NE(group, QemuIdOf(d));
  EXPECT_EQ(ProcStatus(d)["Groups"], d_groups) << "a running QEMU's groups stay";
  EXPECT_TRUE(OpensAs(a, image)) << "a's QEMU can still reopen its image by path";
  EXPECT_TRUE(OpensAs(d, image)) << "d's QEMU can open it by path (its ACL entry)";
  bool inserted = false;
  for (const auto& blk : QueryBlock("priv-cd-d"))
    if (blk.contains("inserted")) inserted |= blk["inserted"].value("file", "") == image.string();
  EXPECT_TRUE(inserted) << "d's QEMU opened the image";

  EXPECT_EQ(Qlaunch({"destroy", "priv-cd-a"}).exit_code, 0);
  EXPECT_EQ(Owner(image), "root:+" + group + " 0640") << "the first owner back in a's place";
  EXPECT_TRUE(OpensAs(d, image)) << "d still opens it";
  RunResult eject = Qlaunch({"change-media", "priv-cd-d", "sda", "--eject"});
  EXPECT_EQ(eject.exit_code, 0) << eject.Describe();
  EXPECT_EQ(Owner(image), "root:root 0640") << "the last user gives it back";
  EXPECT_LT(::getxattr(image.c_str(), "system.posix_acl_access", nullptr, 0), 0) << "no ACL left";
  EXPECT_FALSE(launcher::IdLeased(st.st_gid)) << "the shared group goes with the last user";
  EXPECT_EQ(Qlaunch({"destroy", "priv-cd-d"}).exit_code, 0);
}

TEST_F(LaunchPrivilegesTest, AnImageQemuCannotReachIsAClearErrorNamingTheDisk) {
  fs::path hidden = tmp() / "root-only-dir";
  fs::create_directories(hidden);
  fs::permissions(hidden, fs::perms::owner_all);  // 0700 root: not searchable for qlaunch-qemu
  fs::path image = Image("hidden.img", 0600, hidden);
  const std::string xml = DiskXml("priv-hidden", image, false);
  RunResult r = Qlaunch({"start", xml});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(xml + ":8: error: <disk>: the QEMU user +"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find(" cannot open " + image.string()),
            std::string::npos)
      << r.Describe();
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  ExpectNothingLeft("priv-hidden", HugepagesFree());
}

TEST_F(LaunchPrivilegesTest, AKvmDomainWhoseUserCannotOpenDevKvmIsRefusedBeforeAnythingIsMade) {
  QLAUNCH_SKIP_WITHOUT_HARDWARE("kvm");
  fs::path image = Image("kvm.img");
  std::string xml_text = Slurp(DiskXml("priv-kvm", image, false));
  xml_text.replace(xml_text.find("type='qemu'"), 11, "type='kvm'");
  const fs::path xml = tmp() / "priv-kvm-kvm.xml";
  std::ofstream(xml) << xml_text;
  // nobody is not in the group that owns /dev/kvm: the pre-flight opens it as nobody would.
  RunResult r = Qlaunch({"start", "--user", "nobody:nogroup", xml.string()});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("type='kvm': the QEMU user nobody cannot open /dev/kvm (Permission denied)"),
            std::string::npos)
      << r.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  ExpectNothingLeft("priv-kvm", HugepagesFree());
}

TEST_F(LaunchPrivilegesTest, AnotherUserCannotReachTheQmpSocketOrTheStateDir) {
  pid_t pid = Start(DiskXml("priv-qmp", Image("q.img"), false));
  ASSERT_GT(pid, 0);
  const fs::path dir = DomainStateDir("priv-qmp");
  auto as_nobody = [](const std::string& cmd) {
    std::string full = "setpriv --reuid=nobody --regid=nogroup --clear-groups -- " + cmd + " >/dev/null 2>&1";
    return std::system(full.c_str());
  };
  ASSERT_EQ(as_nobody("true"), 0) << "setpriv cannot switch to nobody here";
  EXPECT_NE(as_nobody("cat " + (dir / "pid").string()), 0) << "nobody read the state dir";
  EXPECT_NE(as_nobody("ls " + dir.string()), 0) << "nobody listed the state dir";
  const std::string connect = "python3 -c \"import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\" " +
                              (dir / "qmp.sock").string();
  EXPECT_NE(as_nobody(connect), 0) << "nobody connected to QMP";
  EXPECT_EQ(std::system((connect + " >/dev/null 2>&1").c_str()), 0) << "root cannot connect: the check is broken";
  EXPECT_EQ(Qlaunch({"destroy", "priv-qmp"}).exit_code, 0);
}

TEST_F(LaunchPrivilegesTest, UserFlagSeclabelAndExplicitRoot) {
  const fs::path image = Image("who.img");
  // --user names another unprivileged user.
  pid_t pid = Start(DiskXml("priv-user", image, false), {"--user", "nobody:nogroup"});
  ASSERT_GT(pid, 0);
  EXPECT_EQ(ProcStatus(pid)["Uid"], "65534\t65534\t65534\t65534");
  EXPECT_EQ(ProcStatus(pid)["CapEff"], "0000000000000000");
  EXPECT_EQ(Owner(image), "nobody:nogroup 0600");
  EXPECT_EQ(Qlaunch({"destroy", "priv-user"}).exit_code, 0);
  EXPECT_EQ(Owner(image), "root:root 0600");

  // The domain's DAC label, and relabel='no' leaves the image alone (so QEMU cannot open it).
  pid = Start(DiskXml("priv-label", image, false,
                      "  <seclabel type='static' model='dac' relabel='yes'><label>nobody:nogroup</label></seclabel>\n"));
  ASSERT_GT(pid, 0);
  EXPECT_EQ(ProcStatus(pid)["Uid"], "65534\t65534\t65534\t65534");
  EXPECT_EQ(Qlaunch({"destroy", "priv-label"}).exit_code, 0);
  const std::string norelabel = DiskXml(
      "priv-norelabel", image, false,
      "  <seclabel type='static' model='dac' relabel='no'><label>nobody:nogroup</label></seclabel>\n");
  RunResult refused = Qlaunch({"start", norelabel});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(refused.err.find("<disk>: the QEMU user nobody cannot open " + image.string()), std::string::npos)
      << refused.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");

  // Root only when named, with a warning; the image is not relabeled for root.
  RunResult root = Qlaunch({"start", "--json", "--user", "root", DiskXml("priv-root", image, false)});
  ASSERT_EQ(root.exit_code, 0) << root.Describe();
  EXPECT_NE(root.err.find("warning: QEMU runs as root with every capability (--user)"), std::string::npos)
      << root.Describe();
  pid = nlohmann::json::parse(root.out).at("pid").get<pid_t>();
  EXPECT_EQ(ProcStatus(pid)["Uid"], "0\t0\t0\t0");
  EXPECT_EQ(Qlaunch({"destroy", "priv-root"}).exit_code, 0);

  // A user that does not exist is named in the error; nothing is started.
  RunResult missing = Qlaunch({"start", "--user", "no-such-user-q", DiskXml("priv-missing", image, false)});
  EXPECT_EQ(missing.exit_code, 1) << missing.Describe();
  EXPECT_NE(missing.err.find("--user no-such-user-q: no such user 'no-such-user-q'"), std::string::npos)
      << missing.Describe();
  ExpectNothingLeft("priv-missing", HugepagesFree());
}

// File-backed guest memory: each domain's directory (<state>/.ram/<name> for ordinary pages,
// <hugetlbfs>/qlaunch/<name> for hugepages) belongs to QEMU's user, mode 0700, while it runs and
// goes with the domain.
TEST_F(LaunchPrivilegesTest, MemoryBackingDirsBelongToQemuAndGoWithTheDomain) {
  HugepagePool pool = HugepagePool::AtLeast(40);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  struct Case {
    const char* name;
    const char* backing;
    fs::path dir;
  } cases[] = {
      {"priv-file-ram", "<memoryBacking><source type='file'/><access mode='shared'/></memoryBacking>",
       StateDir() / ".ram" / "priv-file-ram"},
      {"priv-file-huge", "<memoryBacking><hugepages/></memoryBacking>", "/dev/hugepages/qlaunch/priv-file-huge"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pid_t pid = Start(DiskXml(c.name, Image(std::string(c.name) + ".img"), false, std::string("  ") + c.backing + "\n"));
    ASSERT_GT(pid, 0);
    ExpectUnprivileged(pid);
    EXPECT_EQ(Owner(c.dir), Leased(pid) + " 0700");
    std::string cmdline = Slurp("/proc/" + std::to_string(pid) + "/cmdline");
    EXPECT_NE(cmdline.find("\"mem-path\":\"" + c.dir.string() + "\""), std::string::npos) << cmdline;
    EXPECT_EQ(Qlaunch({"destroy", c.name}).exit_code, 0);
    EXPECT_FALSE(fs::exists(c.dir));
  }
}

// <locked/>: an unprivileged QEMU may mlock only within RLIMIT_MEMLOCK. Where this host lets
// root raise it, QEMU runs with a limit of guest memory + 1 GiB; where it does not (containers),
// the start fails in the pre-flight naming <memoryBacking>, before anything exists.
// <locked/>: where root may raise RLIMIT_MEMLOCK, QEMU gets guest memory + 1 GiB of it.
TEST_F(LaunchPrivilegesTest, LockedMemoryGetsAMemlockLimit) {
  QLAUNCH_SKIP_WITHOUT_HARDWARE("memlock-raise");
  const std::string xml = DiskXml("priv-locked", Image("l.img"), false,
                                  "  <memoryBacking><locked/></memoryBacking>\n");
  const uint64_t need = (64ull << 20) + (1ull << 30);
  RunResult r = Qlaunch({"start", "--json", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  pid_t pid = nlohmann::json::parse(r.out).at("pid").get<pid_t>();
  ExpectUnprivileged(pid);
  std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
  std::string line, memlock;
  while (std::getline(limits, line))
    if (line.rfind("Max locked memory", 0) == 0) memlock = line;
  EXPECT_NE(memlock.find(std::to_string(need)), std::string::npos) << memlock;
  EXPECT_EQ(Qlaunch({"destroy", "priv-locked"}).exit_code, 0);
}

// ... and where it may not, a clear refusal before anything exists. Made real on every host: a
// low hard limit, and qlaunch run without CAP_SYS_RESOURCE (setpriv drops it from the inheritable
// and bounding sets, so root's exec does not get it back).
TEST_F(LaunchPrivilegesTest, LockedMemoryWithoutAMemlockLimitIsRefused) {
  const std::string xml = DiskXml("priv-locked", Image("l.img"), false,
                                  "  <memoryBacking><locked/></memoryBacking>\n");
  const uint64_t need = (64ull << 20) + (1ull << 30);
  const uint64_t free_before = HugepagesFree();
  RunResult r = RunningProcess({"/usr/bin/prlimit", "--memlock=65536:65536", "/usr/bin/setpriv",
                                "--inh-caps=-sys_resource", "--bounding-set=-sys_resource", "--", QlaunchBinary(),
                                "start", "--json", xml},
                               BaseEnv())
                    .Wait();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(xml + ":6: error: <memoryBacking>: <locked/>: QEMU's user +"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find(" needs RLIMIT_MEMLOCK of " + std::to_string(need) + " bytes"),
            std::string::npos)
      << r.Describe();
  EXPECT_NE(r.err.find("the hard limit is 65536 bytes"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("--user root"), std::string::npos) << r.Describe();
  ExpectNothingLeft("priv-locked", free_before);
}

// QEMU joins <cgroup2>/qlaunch.slice/<name> before exec; the cgroup goes with the domain, also
// after kill -9 of QEMU (at the next list). Where the hierarchy has no cpuset controller (this
// machine binds cpuset to cgroup v1), start --json says so in a note; the limit itself is
// CgroupCpusetLimitsQemu's, skipped for that missing hardware.
TEST_F(LaunchPrivilegesTest, QemuRunsInItsOwnCgroupRemovedWithTheDomain) {
  std::optional<fs::path> mount = Cgroup2MountForTest();
  ASSERT_TRUE(mount) << "no cgroup v2 mounted here";
  const std::string xml = DiskXml("priv-cg", Image("cg.img"), false, "  <cputune><emulatorpin cpuset='0'/></cputune>\n");
  RunResult r = Qlaunch({"start", "--json", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  nlohmann::json report = nlohmann::json::parse(r.out);
  const pid_t pid = report.at("pid").get<pid_t>();
  const fs::path cg = *mount / "qlaunch.slice" / "priv-cg";
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line, v2;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
  EXPECT_EQ(v2, "/qlaunch.slice/priv-cg");
  EXPECT_TRUE(fs::is_directory(cg));
  const bool has_cpuset = MissingHardware("cpuset").empty();
  EXPECT_EQ(report["notes"].dump().find("has no cpuset controller") == std::string::npos, has_cpuset)
      << report.dump();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 500 && !PidGone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Qlaunch({"list", "--json"}).out, "[]\n");
  EXPECT_FALSE(fs::exists(cg)) << "the cgroup outlived its domain";
}

// <emulatorpin> becomes the domain cgroup's cpuset.cpus where the controller exists.
TEST_F(LaunchPrivilegesTest, CgroupCpusetLimitsQemu) {
  QLAUNCH_SKIP_WITHOUT_HARDWARE("cpuset");
  std::optional<fs::path> mount = Cgroup2MountForTest();
  ASSERT_TRUE(mount);
  const std::string xml = DiskXml("priv-cs", Image("cs.img"), false, "  <cputune><emulatorpin cpuset='0'/></cputune>\n");
  RunResult r = Qlaunch({"start", "--json", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::ifstream cpus(*mount / "qlaunch.slice" / "priv-cs" / "cpuset.cpus");
  std::string set;
  std::getline(cpus, set);
  EXPECT_EQ(set, "0");
  EXPECT_EQ(Qlaunch({"destroy", "priv-cs"}).exit_code, 0);
}

}  // namespace
}  // namespace qlaunch::testing
