// The LaunchIsolationTest fixture: private lease range, memfd domains, the attack (isolation_env.h).
#include "support/isolation_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "launcher/host/uid_lease.h"
#include "support/slurp.h"

namespace qlaunch::testing {

namespace fs = std::filesystem;

namespace {

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

}  // namespace

void LaunchIsolationTest::SetUp() {
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

void LaunchIsolationTest::TearDown() {
  LaunchTest::TearDown();
  ::unsetenv("QLAUNCH_UID_LEASES");
  ::unsetenv("QLAUNCH_UID_RANGE");
}

std::string LaunchIsolationTest::Domain(const std::string& name) {
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

fs::path LaunchIsolationTest::Image(const std::string& name) {
  const fs::path p = tmp() / "images" / (name + ".img");
  if (!fs::exists(p)) {
    std::ofstream(p) << std::string(1 << 20, 'x');
    (void)!::chown(p.c_str(), 0, 0);
    ::chmod(p.c_str(), 0600);
  }
  return p;
}

pid_t LaunchIsolationTest::Start(const std::string& xml, const std::vector<std::string>& flags, const Env& env,
                                 std::string* err) {
  std::vector<std::string> args = {"start", "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(xml);
  RunResult r = Qlaunch(args, env);
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  if (err) *err = r.err;
  if (r.exit_code != 0) return 0;
  return nlohmann::json::parse(r.out).at("pid").get<pid_t>();
}

std::map<std::string, std::string> LaunchIsolationTest::Attack(pid_t a, pid_t b, const fs::path& b_disk) {
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

std::string LaunchIsolationTest::Describe(const std::map<std::string, std::string>& outcome) {
  std::string s;
  for (const auto& [name, result] : outcome) s += name + "=" + result + " ";
  return s;
}

void LaunchIsolationTest::ExpectNothingOwnedByTheRange(const std::vector<fs::path>& paths) {
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

}  // namespace qlaunch::testing
