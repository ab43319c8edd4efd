// Domains isolated from each other with no LSM (issue 37, docs/security.md): every domain's
// QEMU runs as a uid and gid of its own, leased from a range.
//
// The attack test runs a small program with the credentials and in the namespaces of domain A's
// QEMU (nsenter into them, setpriv to its uid, gid and groups: what guest code that escaped into
// that QEMU has) against domain B's QEMU, eight attacks, and reports each one's errno. With
// leased ids all eight are refused; with QLAUNCH_ISOLATION=off (one qlaunch-qemu for all, as
// before) and with two domains given one --user, they reach (and the second start warned).
//
// Every test here points the lease registry and range somewhere private (QLAUNCH_UID_LEASES,
// QLAUNCH_UID_RANGE: other tests and helpers lease from the host's registry meanwhile).
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "launcher/host/uid_lease.h"
#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/qlaunch_run.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Run by the attacker: one line per attack, "NAME reached" or "NAME ERRNO_NAME".
constexpr const char* kAttack = R"PY(import ctypes, errno, os, sys
pid, addr, fd, disk = int(sys.argv[1]), int(sys.argv[2], 16), int(sys.argv[3]), sys.argv[4]
libc = ctypes.CDLL(None, use_errno=True)
def check(ret):
    if ret == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return ret
def read(path, offset=0):
    f = os.open(path, os.O_RDONLY)
    try:
        if not os.pread(f, 64, offset): raise OSError(errno.EIO, "nothing read")
    finally:
        os.close(f)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
def vm_readv():
    buf = ctypes.create_string_buffer(64)
    local, remote = iovec(ctypes.addressof(buf), 64), iovec(addr, 64)
    libc.process_vm_readv.restype = ctypes.c_ssize_t
    check(libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
def ptrace():
    libc.ptrace.restype = ctypes.c_long
    check(libc.ptrace(16, pid, None, None))  # PTRACE_ATTACH
    os.waitpid(pid, 0x40000000)              # __WALL: it stops for us
    check(libc.ptrace(17, pid, None, None))  # PTRACE_DETACH: it runs on
attacks = [("maps", lambda: read("/proc/%d/maps" % pid)),
           ("mem", lambda: read("/proc/%d/mem" % pid, addr)),
           ("process_vm_readv", vm_readv),
           ("memfd", lambda: read("/proc/%d/fd/%d" % (pid, fd))),
           ("signal", lambda: os.kill(pid, 0)),
           ("ptrace", ptrace),
           ("disk", lambda: read(disk)),
           ("environ", lambda: read("/proc/%d/environ" % pid))]
for name, attack in attacks:
    try:
        attack()
        print(name, "reached")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
    sys.stdout.flush()
)PY";

const char* const kAttacks[] = {"maps", "mem", "process_vm_readv", "memfd", "signal", "ptrace", "disk", "environ"};

class LaunchIsolationTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: only a root qlaunch gives QEMU ids of its own";
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    // No hugepages here, but ExpectNothingLeft counts the free ones: the lock, so that nobody else
    // changes them meanwhile.
    pool_.emplace(HugepagePool::LockOnly());
    free_before_ = HugepagesFree();
    // A registry and a range of this test's own, for qlaunch and for the checks here.
    ::setenv("QLAUNCH_UID_LEASES", (tmp() / "leases").c_str(), 1);
    ::setenv("QLAUNCH_UID_RANGE", range_.c_str(), 1);
    fs::create_directories(tmp() / "images");
    fs::permissions(tmp() / "images", fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
    std::ofstream(tmp() / "attack.py") << kAttack;
    fs::permissions(tmp() / "attack.py", fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  }
  void TearDown() override {
    LaunchTest::TearDown();
    ::unsetenv("QLAUNCH_UID_LEASES");
    ::unsetenv("QLAUNCH_UID_RANGE");
  }

  // A root-owned 0600 raw image, and a domain on it whose guest memory is a shared memfd.
  std::string Domain(const std::string& name) {
    const fs::path image = Image(name);
    const std::string xml =
        "<domain type='qemu'>\n  <name>" + name + "</name>\n  <memory unit='MiB'>64</memory>\n  <vcpu>1</vcpu>\n"
        "  <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>\n"
        "  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n  <devices>\n    <emulator>" + std::string(kQemu72) +
        "</emulator>\n    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw'/>\n"
        "      <source file='" + image.string() + "'/>\n      <target dev='vda' bus='virtio'/>\n    </disk>\n"
        "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    const fs::path f = tmp() / (name + ".xml");
    std::ofstream(f) << xml;
    return f.string();
  }
  fs::path Image(const std::string& name) {
    const fs::path p = tmp() / "images" / (name + ".img");
    if (!fs::exists(p)) {
      std::ofstream(p) << std::string(1 << 20, 'x');
      (void)!::chown(p.c_str(), 0, 0);
      ::chmod(p.c_str(), 0600);
    }
    return p;
  }

  pid_t Start(const std::string& xml, const std::vector<std::string>& flags = {}, const Env& env = {},
              std::string* err = nullptr) {
    std::vector<std::string> args = {"start", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(xml);
    RunResult r = Qlaunch(args, env);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (err) *err = r.err;
    if (r.exit_code != 0) return 0;
    return json::parse(r.out).at("pid").get<pid_t>();
  }

  // The eight attacks, run as the QEMU of `a` is (its namespaces, uid, gid and groups) against
  // the QEMU of `b` on `b_disk`: each attack's outcome, "reached" or the errno's name.
  std::map<std::string, std::string> Attack(pid_t a, pid_t b, const fs::path& b_disk) {
    // As root: where B's guest memory is (its largest mapping) and which fd is its memfd.
    uint64_t addr = 0, biggest = 0;
    std::istringstream maps(Slurp("/proc/" + std::to_string(b) + "/maps"));
    for (std::string line; std::getline(maps, line);) {
      unsigned long long from = 0, to = 0;
      if (std::sscanf(line.c_str(), "%llx-%llx", &from, &to) == 2 && to - from > biggest && line.find("memfd:") != std::string::npos)
        biggest = to - from, addr = from;
    }
    int memfd = -1;
    std::error_code ec;
    for (fs::directory_iterator it("/proc/" + std::to_string(b) + "/fd", ec), end; !ec && it != end; it.increment(ec))
      if (fs::read_symlink(it->path(), ec).string().rfind("/memfd:", 0) == 0) memfd = std::stoi(it->path().filename());
    EXPECT_NE(addr, 0u) << "no memfd mapping in B's maps";
    EXPECT_GE(memfd, 0) << "B holds no memfd";
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(addr));
    std::vector<std::string> argv = {"/usr/bin/nsenter", "-t", std::to_string(a), "-m", "-p", "-i", "-u", "--"};
    for (const std::string& arg : SetprivTo(a)) argv.push_back(arg);
    for (const std::string& arg : std::vector<std::string>{"/usr/bin/python3", (tmp() / "attack.py").string(),
                                                           std::to_string(b), hex, std::to_string(memfd),
                                                           b_disk.string()})
      argv.push_back(arg);
    RunResult r = RunningProcess(argv, {}).Wait(std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    std::map<std::string, std::string> out;
    std::istringstream lines(r.out);
    for (std::string name, result; lines >> name >> result;) out[name] = result;
    EXPECT_EQ(out.size(), 8u) << r.Describe();
    return out;
  }

  static std::string Describe(const std::map<std::string, std::string>& outcome) {
    std::string s;
    for (const auto& [name, result] : outcome) s += name + "=" + result + " ";
    return s;
  }

  // No file among `paths` (recursively) owned by a uid or group of the lease range.
  void ExpectNothingOwnedByTheRange(const std::vector<fs::path>& paths) {
    const launcher::IdRange range = launcher::LeaseRange();
    for (const fs::path& root : paths) {
      std::error_code ec;
      std::vector<fs::path> all{root};
      if (fs::is_directory(root, ec))
        for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) all.push_back(it->path());
      for (const fs::path& p : all) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) continue;
        EXPECT_FALSE(st.st_uid >= range.first && st.st_uid <= range.last) << p << " owned by leased uid " << st.st_uid;
        EXPECT_FALSE(st.st_gid >= range.first && st.st_gid <= range.last) << p << " has leased group " << st.st_gid;
      }
    }
  }

  std::string range_ = "3700000-3700009";
  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
};

TEST_F(LaunchIsolationTest, FromOneDomainsQemuEveryAttackOnAnotherIsRefused) {
  const pid_t a = Start(Domain("iso-a")), b = Start(Domain("iso-b"));
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  ExpectUnprivileged(a);
  ExpectUnprivileged(b);
  ASSERT_NE(QemuIdOf(a), QemuIdOf(b)) << "two domains, one uid";
  const auto outcome = Attack(a, b, Image("iso-b"));
  for (const char* attack : kAttacks) {
    ASSERT_TRUE(outcome.count(attack)) << attack << ": " << Describe(outcome);
    EXPECT_NE(outcome.at(attack), "reached") << attack << ": " << Describe(outcome);
  }
  // The errnos, for the record (the test log) and as the kernel gives them today: B's /proc
  // entries are not even there for A (its /proc has hidepid=invisible), the rest is refused by
  // the uid.
  std::printf("isolated: %s\n", Describe(outcome).c_str());
  for (const char* hidden : {"maps", "mem", "memfd", "environ"}) EXPECT_EQ(outcome.at(hidden), "ENOENT") << hidden;
  EXPECT_EQ(outcome.at("process_vm_readv"), "EPERM") << Describe(outcome);
  EXPECT_EQ(outcome.at("ptrace"), "EPERM") << Describe(outcome);
  EXPECT_EQ(outcome.at("signal"), "EPERM") << Describe(outcome);
  EXPECT_EQ(outcome.at("disk"), "EACCES") << Describe(outcome);

  // A's mount namespace: a /dev of a few nodes (TCG: no kvm), a /proc with hidepid.
  std::set<std::string> dev;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(a) + "/root/dev")) dev.insert(e.path().filename());
  for (const std::string& n : dev)
    EXPECT_TRUE(std::set<std::string>({"fd", "full", "null", "ptmx", "pts", "random", "stderr", "stdin", "stdout",
                                       "urandom", "zero", "vhost-net", "hugepages", "hugepages1G"})
                    .count(n))
        << "/dev/" << n << " in QEMU's private /dev";
  EXPECT_FALSE(dev.count("kvm"));
  EXPECT_NE(Slurp("/proc/" + std::to_string(a) + "/mountinfo").find("hidepid=invisible"), std::string::npos);
  // dominfo and list say so.
  RunResult info = Qlaunch({"dominfo", "--json", "iso-a"});
  ASSERT_EQ(info.exit_code, 0) << info.Describe();
  const json di = json::parse(info.out);
  EXPECT_EQ(di["uid"], std::stoul(QemuIdOf(a)));
  EXPECT_EQ(di["gid"], std::stoul(QemuIdOf(a)));
  EXPECT_EQ(di["leased"], true);
  EXPECT_EQ(di["namespaces"], json::array({"mnt"}));
  RunResult list = Qlaunch({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  for (const json& d : json::parse(list.out)) {
    EXPECT_EQ(d["uid"], std::stoul(QemuIdOf(d["pid"].get<pid_t>()))) << d.dump();
    EXPECT_EQ(d["namespaces"], json::array({"mnt"})) << d.dump();
  }

  // B from A's side reaches nothing; B still runs, untouched.
  EXPECT_FALSE(PidGone(b));
  EXPECT_EQ(Qlaunch({"destroy", "iso-a"}).exit_code, 0);
  EXPECT_EQ(Qlaunch({"destroy", "iso-b"}).exit_code, 0);
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "images"});
  EXPECT_EQ(launcher::IdsHeldUnder("/"), std::vector<uint32_t>{}) << "leases left in the private registry";
  ExpectNothingLeft("iso-b", free_before_);
}

// The switch: with isolation off every domain's QEMU is qlaunch-qemu, as before, and the same
// attacks reach. This is what the test above would see if the leased ids were lost.
TEST_F(LaunchIsolationTest, WithIsolationOffTheSameAttacksReach) {
  ASSERT_NE(::getpwnam("qlaunch-qemu"), nullptr) << "scripts/setup creates the qlaunch-qemu user";
  const Env off = {{"QLAUNCH_ISOLATION", "off"}};
  const pid_t a = Start(Domain("iso-off-a"), {}, off), b = Start(Domain("iso-off-b"), {}, off);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_EQ(QemuIdOf(a), std::to_string(::getpwnam("qlaunch-qemu")->pw_uid));
  const auto outcome = Attack(a, b, Image("iso-off-b"));
  std::printf("isolation off: %s\n", Describe(outcome).c_str());
  for (const char* attack : kAttacks) EXPECT_EQ(outcome.at(attack), "reached") << attack << ": " << Describe(outcome);
  EXPECT_FALSE(PidGone(b)) << "the ptrace attach stopped it only for a moment";
  EXPECT_EQ(Qlaunch({"destroy", "iso-off-a"}).exit_code, 0);
  EXPECT_EQ(Qlaunch({"destroy", "iso-off-b"}).exit_code, 0);
  ExpectNothingLeft("iso-off-b", free_before_);
}

// Two domains given one --user share its ids: the second start warns, and the attacks reach.
TEST_F(LaunchIsolationTest, TwoDomainsNamingOneUserAreWarnedAboutAndReachEachOther) {
  const pid_t a = Start(Domain("iso-same-a"), {"--user", "qlaunch-qemu"});
  std::string err;
  const pid_t b = Start(Domain("iso-same-b"), {"--user", "qlaunch-qemu"}, {}, &err);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_NE(err.find("warning: domain iso-same-a runs as qlaunch-qemu:qlaunch-qemu too: a guest that escapes into "
                     "either QEMU reaches the other"),
            std::string::npos)
      << err;
  // validate says so too, of a domain whose DAC <seclabel> names that user.
  std::string labelled = Slurp(Domain("iso-same-c"));
  labelled.replace(labelled.find("  <os>"), 0,
                   "  <seclabel type='static' model='dac'><label>qlaunch-qemu:qlaunch-qemu</label></seclabel>\n");
  std::ofstream(tmp() / "iso-same-c.xml") << labelled;
  RunResult validate = Qlaunch({"validate", (tmp() / "iso-same-c.xml").string()});
  EXPECT_EQ(validate.exit_code, 0) << validate.Describe();
  EXPECT_NE(validate.err.find("warning: <seclabel>: domain iso-same-a runs as qlaunch-qemu:qlaunch-qemu too"),
            std::string::npos)
      << validate.Describe();
  const auto outcome = Attack(a, b, Image("iso-same-b"));
  std::printf("one --user: %s\n", Describe(outcome).c_str());
  for (const char* attack : kAttacks) EXPECT_EQ(outcome.at(attack), "reached") << attack << ": " << Describe(outcome);
  EXPECT_EQ(Qlaunch({"destroy", "iso-same-a"}).exit_code, 0);
  EXPECT_EQ(Qlaunch({"destroy", "iso-same-b"}).exit_code, 0);
  ExpectNothingLeft("iso-same-b", free_before_);
}

// A range of two: a third domain is refused in the pre-flight, naming the range, and nothing of
// it is left (no state, its image untouched, no lease). Once one goes, its uid serves again.
TEST_F(LaunchIsolationTest, ALeaseRangeOfTwoRefusesTheThirdStartInThePreflight) {
  range_ = "3700100-3700101";
  ::setenv("QLAUNCH_UID_RANGE", range_.c_str(), 1);
  const pid_t a = Start(Domain("iso-r1")), b = Start(Domain("iso-r2"));
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  const std::string third = Domain("iso-r3");
  RunResult r = Qlaunch({"start", third});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("no free uid in the lease range 3700100-3700101"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("widen QLAUNCH_UID_RANGE"), std::string::npos) << r.Describe();
  EXPECT_FALSE(fs::exists(DomainStateDir("iso-r3")));
  struct stat st {};
  ASSERT_EQ(::stat(Image("iso-r3").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(launcher::IdsHeldUnder(DomainStateDir("iso-r3")), std::vector<uint32_t>{});

  const std::string freed = QemuIdOf(a);
  EXPECT_EQ(Qlaunch({"destroy", "iso-r1"}).exit_code, 0);
  const pid_t c = Start(third);
  ASSERT_GT(c, 0);
  EXPECT_EQ(QemuIdOf(c), freed) << "the destroyed domain's uid is free again";
  for (const char* name : {"iso-r2", "iso-r3"}) EXPECT_EQ(Qlaunch({"destroy", name}).exit_code, 0);
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "images"});
  ExpectNothingLeft("iso-r3", free_before_);
}

// qlaunch start SIGKILLed once QEMU is spawned (a QEMU that never greets keeps it waiting): its
// lease stays recorded with the state; the next command (list) releases it with the rest, and
// gives the image back.
TEST_F(LaunchIsolationTest, ASigkilledStartsLeaseIsRecoveredByTheNextCommand) {
  range_ = "3700200-3700200";  // one uid: the next start needs it back
  ::setenv("QLAUNCH_UID_RANGE", range_.c_str(), 1);
  const fs::path fake = tmp() / "sleepy-qemu";
  std::ofstream(fake) << "#!/bin/sh\ncase \" $* \" in *\" -machine none \"*) exec " << kQemu72
                      << " \"$@\";; esac\nexec sleep 600\n";
  fs::permissions(fake, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const std::string xml = Domain("iso-kill");
  Env env = BaseEnv();
  env["QLAUNCH_UID_LEASES"] = (tmp() / "leases").string();
  env["QLAUNCH_UID_RANGE"] = range_;
  RunningProcess start({QlaunchBinary(), "start", "--qemu", fake.string(), xml}, env);
  const fs::path pid_file = DomainStateDir("iso-kill") / "pid";
  for (int i = 0; i < 1000 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(pid_file)) << start.ErrSoFar();
  ASSERT_EQ(::kill(start.pid(), SIGKILL), 0);
  RunResult killed = start.Wait();
  EXPECT_EQ(killed.signal, SIGKILL) << killed.Describe();
  EXPECT_EQ(launcher::IdsHeldUnder(StateDir()), std::vector<uint32_t>{3700200}) << "held with the state it left";
  struct stat st {};
  ASSERT_EQ(::stat(Image("iso-kill").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 3700200u) << "given to the leased uid before QEMU was spawned";

  RunResult list = Qlaunch({"list", "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_EQ(list.out, "[]\n") << list.Describe();
  EXPECT_EQ(launcher::IdsHeldUnder("/"), std::vector<uint32_t>{}) << "list released the lease";
  ASSERT_EQ(::stat(Image("iso-kill").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "images"});
  // The one uid serves the next start.
  const pid_t again = Start(xml);
  ASSERT_GT(again, 0);
  EXPECT_EQ(QemuIdOf(again), "3700200");
  EXPECT_EQ(Qlaunch({"destroy", "iso-kill"}).exit_code, 0);
  ExpectNothingLeft("iso-kill", free_before_);
}

// A start SIGKILLed after it leased its ids but before it made its domain dir: its lease names a
// dir that does not exist and a qlaunch that is gone. The next command lets it go, not only the
// next lease: `list` (with no domain to look at), and a verb on a named domain (destroy).
TEST_F(LaunchIsolationTest, ALeaseOfAStartKilledBeforeItsStateDirIsReapedByTheNextCommand) {
  range_ = "3700300-3700301";
  ::setenv("QLAUNCH_UID_RANGE", range_.c_str(), 1);
  Env env = BaseEnv();
  env["QLAUNCH_UID_LEASES"] = (tmp() / "leases").string();
  env["QLAUNCH_UID_RANGE"] = range_;
  // Leases as start does (its key, the domain dir it is about to make), then dies.
  auto lease_and_die = [&](const std::string& name) -> uint32_t {
    const fs::path out = tmp() / (name + ".id");
    const pid_t child = ::fork();
    if (child == 0) {
      const uint32_t id = launcher::LeaseId("domain:" + name + ":00000000-0000-0000-0000-000000000000",
                                            StateDir() / name);
      std::ofstream(out) << id;
      ::_exit(0);
    }
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_FALSE(fs::exists(StateDir() / name));
    return static_cast<uint32_t>(std::stoul(Slurp(out)));
  };

  const uint32_t first = lease_and_die("iso-gone");
  EXPECT_EQ(first, 3700300u);
  EXPECT_TRUE(launcher::IdLeased(first)) << "nothing let it go yet";
  RunResult list = Qlaunch({"list", "--json"}, env);
  EXPECT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_EQ(list.out, "[]\n");
  EXPECT_FALSE(launcher::IdLeased(first)) << "list reaped the dead start's lease";

  const uint32_t second = lease_and_die("iso-gone2");
  EXPECT_TRUE(launcher::IdLeased(second));
  RunResult destroy = Qlaunch({"destroy", "iso-gone2"}, env);
  EXPECT_NE(destroy.exit_code, 0) << destroy.Describe();  // not running
  EXPECT_FALSE(launcher::IdLeased(second)) << "a verb on a named domain reaped it too";
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "leases"});
}

}  // namespace
}  // namespace qlaunch::testing
