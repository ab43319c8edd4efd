#include "qemu_cmd/caps_probe.h"
#include "qemu_cmd/kvm_device.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <boost/process.hpp>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include "support/build_paths.h"
#include <nlohmann/json.hpp>

namespace qlaunch::qemu {
namespace {

using qlaunch::testing::TempDir;

namespace fs = std::filesystem;
namespace bp = boost::process;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kQemu72 = "/usr/bin/qemu-system-x86_64";

QemuCaps Fixture(const std::string& name) {
  std::ifstream in(std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/caps/" + name);
  if (!in) throw std::runtime_error("missing fixture " + name);
  return json::parse(in).get<QemuCaps>();
}

// "major.minor" from `<binary> --version`, asked independently of the probe.
std::string VersionFromCli(const std::string& binary) {
  bp::ipstream out;
  bp::child c(binary, "--version", bp::std_out > out, bp::std_err > bp::null, bp::std_in < bp::null);
  std::string line;
  std::getline(out, line);
  c.wait();
  int major = 0, minor = 0;
  if (std::sscanf(line.c_str(), "QEMU emulator version %d.%d", &major, &minor) != 2) return "";
  return std::to_string(major) + "." + std::to_string(minor);
}

// The device the host is judged by: /dev/kvm, or $QLAUNCH_KVM_DEVICE (a test host without KVM).
bool HostKvmOpensReadWrite() {
  int fd = ::open(KvmDevicePath().c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

ProbeOptions NoCache() {
  ProbeOptions o;
  o.use_cache = false;
  return o;
}

// Every feature flag and major.minor; micro, package and binary may differ between machines.
// kvm is a property of this host (is /dev/kvm usable), not of the binary, so it is checked
// against the host instead of the fixture.
void ExpectMatchesFixture(const QemuCaps& got, const QemuCaps& want) {
  EXPECT_EQ(got.major, want.major);
  EXPECT_EQ(got.minor, want.minor);
  EXPECT_EQ(got.thread_context, want.thread_context);
  EXPECT_EQ(got.prealloc_context, want.prealloc_context);
  EXPECT_EQ(got.prealloc_threads, want.prealloc_threads);
  EXPECT_EQ(got.memfd, want.memfd);
  EXPECT_EQ(got.memfd_hugetlb, want.memfd_hugetlb);
  EXPECT_EQ(got.virtio_mem, want.virtio_mem);
  EXPECT_EQ(got.virtio_mem_prealloc, want.virtio_mem_prealloc);
  EXPECT_EQ(got.backend_reserve, want.backend_reserve);
  EXPECT_EQ(got.json_object, want.json_object);
  EXPECT_EQ(got.sandbox, want.sandbox);
  EXPECT_EQ(got.machine_memory_backend, want.machine_memory_backend);
  EXPECT_EQ(got.kvm, HostKvmOpensReadWrite()) << "Debian's QEMU is built with KVM; kvm should follow /dev/kvm";
  EXPECT_FALSE(got.package.empty());
}

TEST(ProbeCaps, Qemu72MatchesFixture) {
  if (::access(kQemu72, X_OK) != 0) GTEST_SKIP() << kQemu72 << " is not installed (apt-get install qemu-system-x86)";
  if (std::string v = VersionFromCli(kQemu72); v != "7.2") GTEST_SKIP() << kQemu72 << " is QEMU " << v << ", not 7.2";
  QemuCaps caps = ProbeCaps(kQemu72, NoCache());
  ExpectMatchesFixture(caps, Fixture("qemu-7.2.json"));
  EXPECT_EQ(caps.binary, kQemu72);
}

TEST(ProbeCaps, Qemu52MatchesFixture) {
  QemuCaps want = Fixture("qemu-5.2.json");
  if (::access(want.binary.c_str(), X_OK) != 0)
    GTEST_SKIP() << want.binary << " is missing: run scripts/install-old-qemu (as root) to install QEMU 5.2";
  QemuCaps caps = ProbeCaps(want.binary, NoCache());
  ExpectMatchesFixture(caps, want);
  EXPECT_EQ(caps.binary, want.binary);
}

std::string MessageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception)";
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

fs::path WriteScript(const fs::path& path, const std::string& body, fs::perms perms = fs::perms::owner_all) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(path, perms);
  return path;
}

TEST(ProbeCapsErrors, MissingBinaryIsNamed) {
  std::string msg = MessageOf([] { ProbeCaps("/nonexistent/qlaunch/qemu-system-x86_64", NoCache()); });
  EXPECT_TRUE(Contains(msg, "/nonexistent/qlaunch/qemu-system-x86_64")) << msg;
  EXPECT_TRUE(Contains(msg, "No such file")) << msg;
}

TEST(ProbeCaps, BareNameIsFoundInPath) {
  if (::access(kQemu72, X_OK) != 0) GTEST_SKIP() << kQemu72 << " is not installed (apt-get install qemu-system-x86)";
  std::string old = getenv("PATH") ? getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent/qlaunch:/usr/bin", 1);
  QemuCaps caps = ProbeCaps("qemu-system-x86_64", NoCache());
  ::setenv("PATH", old.c_str(), 1);
  EXPECT_EQ(caps.binary, "qemu-system-x86_64");
  EXPECT_GE(caps.major, 2);
}

TEST(ProbeCapsErrors, BareNameNotInPath) {
  std::string msg = MessageOf([] { ProbeCaps("qlaunch-no-such-qemu", NoCache()); });
  EXPECT_TRUE(Contains(msg, "qlaunch-no-such-qemu")) << msg;
  EXPECT_TRUE(Contains(msg, "PATH")) << msg;
}

TEST(ProbeCapsErrors, NotExecutable) {
  TempDir dir;
  fs::path f = WriteScript(dir.path / "qemu", "exit 0", fs::perms::owner_read | fs::perms::owner_write);
  // root passes access(X_OK) only when some execute bit is set; none is here.
  std::string msg = MessageOf([&] { ProbeCaps(f.string(), NoCache()); });
  EXPECT_TRUE(Contains(msg, f.string())) << msg;
  EXPECT_TRUE(Contains(msg, "not executable")) << msg;
}

TEST(ProbeCapsErrors, Directory) {
  TempDir dir;
  std::string msg = MessageOf([&] { ProbeCaps(dir.path.string(), NoCache()); });
  EXPECT_TRUE(Contains(msg, dir.path.string())) << msg;
  EXPECT_TRUE(Contains(msg, "directory")) << msg;
}

TEST(ProbeCapsErrors, ImmediateExitIsReportedWithoutWaitingForTheTimeout) {
  ProbeOptions o = NoCache();
  o.timeout = 120s;
  auto start = std::chrono::steady_clock::now();
  std::string msg = MessageOf([&] { ProbeCaps("/bin/false", o); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);  // far below the timeout
  EXPECT_TRUE(Contains(msg, "/bin/false")) << msg;
  EXPECT_TRUE(Contains(msg, "exited")) << msg;
  EXPECT_TRUE(Contains(msg, "status 1")) << msg;
}

TEST(ProbeCapsErrors, EarlyExitShowsTheOutputTail) {
  TempDir dir;
  fs::path f = WriteScript(dir.path / "qemu", "echo 'qemu-system-x86_64: -machine none: bad thing happened' >&2\nexit 3");
  std::string msg = MessageOf([&] { ProbeCaps(f.string(), NoCache()); });
  EXPECT_TRUE(Contains(msg, f.string())) << msg;
  EXPECT_TRUE(Contains(msg, "status 3")) << msg;
  EXPECT_TRUE(Contains(msg, "bad thing happened")) << msg;
}

TEST(ProbeCapsErrors, SilentBinaryTimesOutAndIsKilled) {
  TempDir dir;
  fs::path pidfile = dir.path / "pid";
  fs::path f = WriteScript(dir.path / "qemu", "echo $$ > " + pidfile.string() + "\nexec sleep 60");
  ProbeOptions o = NoCache();
  o.timeout = 500ms;
  std::string msg = MessageOf([&] { ProbeCaps(f.string(), o); });
  EXPECT_TRUE(Contains(msg, f.string())) << msg;
  EXPECT_TRUE(Contains(msg, "no QMP greeting within 500 ms")) << msg;
  pid_t pid = 0;
  std::ifstream(pidfile) >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_NE(::kill(pid, 0), 0) << "probe left process " << pid << " running";
}

// Plays the QEMU of the first `fakes` probes of `script`: each of those runs only records its
// arguments (a line in `args_file`) and sleeps, and this thread serves QMP on the socket named
// there, answering qom-list-properties with the error QEMU 7.2 once gave us for no reason.
class FakeQmpServer {
 public:
  FakeQmpServer(fs::path args_file, int fakes) : args_file_(std::move(args_file)), fakes_(fakes) {
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeQmpServer() { thread_.join(); }
  int errors_sent() const { return errors_sent_; }

 private:
  void Run() {
    for (int run = 1; run <= fakes_; ++run) {
      std::string socket_path = WaitForSocketPath(run);
      if (socket_path.empty()) return;
      Serve(socket_path);
    }
  }

  // The path in "-qmp unix:PATH,server=on,wait=off" of the run-th recorded command line.
  std::string WaitForSocketPath(int run) {
    for (int i = 0; i < 1000; ++i) {
      std::ifstream in(args_file_);
      std::string line;
      for (int n = 0; n < run && std::getline(in, line);) ++n;
      std::istringstream words(line);
      std::string w;
      while (words >> w)
        if (w.rfind("unix:", 0) == 0) return w.substr(5, w.find(',') - 5);
      std::this_thread::sleep_for(10ms);
    }
    return "";
  }

  void Serve(const std::string& socket_path) {
    int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path.c_str());
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 1) != 0) {
      ::close(listener);
      return;
    }
    pollfd p{listener, POLLIN, 0};
    int fd = ::poll(&p, 1, 10000) == 1 ? ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC) : -1;
    ::close(listener);
    if (fd < 0) return;
    Send(fd, {{"QMP", {{"version", {{"qemu", {{"major", 7}, {"minor", 2}, {"micro", 0}}}, {"package", ""}}},
                       {"capabilities", json::array()}}}});
    std::string buffer;
    char chunk[4096];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) {
      buffer.append(chunk, n);
      for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
        json request = json::parse(buffer.substr(0, nl), nullptr, false);
        if (!request.is_object()) continue;  // only the probe talks to us, in valid JSON
        const std::string command = request.value("execute", "");
        json reply = {{"id", request["id"]}, {"return", json::object()}};
        if (command == "query-version") reply["return"] = {{"qemu", {{"major", 7}, {"minor", 2}, {"micro", 0}}}, {"package", ""}};
        if (command == "qom-list-types") reply["return"] = json::array();
        if (command == "qom-list-properties") {
          reply.erase("return");
          reply["error"] = {{"class", "GenericError"}, {"desc", "Parameter 'typename' is missing"}};
          ++errors_sent_;
        }
        Send(fd, reply);
      }
    }
    ::close(fd);
  }

  static void Send(int fd, const json& message) {
    std::string text = message.dump() + "\n";
    if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return;
  }

  fs::path args_file_;
  int fakes_;
  std::atomic<int> errors_sent_{0};
  std::thread thread_;
};

// The first `fakes` runs of the returned script record their arguments and sleep (FakeQmpServer
// answers for them); later runs are the real QEMU 7.2.
fs::path FlakyQemu(const TempDir& dir, int fakes) {
  const fs::path count = dir.path / "runs", args = dir.path / "args";
  return WriteScript(dir.path / "qemu",
                     "n=$(cat " + count.string() + " 2>/dev/null || echo 0); echo $((n + 1)) > " + count.string() +
                         "\nif [ $n -lt " + std::to_string(fakes) + " ]; then echo \"$@\" >> " + args.string() +
                         "; exec sleep 60; fi\nexec " + kQemu72 + " \"$@\"");
}

TEST(ProbeCaps, AFailedQmpExchangeIsTriedOnceMoreWithAFreshQemu) {
  if (::access(kQemu72, X_OK) != 0) GTEST_SKIP() << kQemu72 << " is not installed (apt-get install qemu-system-x86)";
  TempDir dir;
  fs::path qemu = FlakyQemu(dir, 1);
  ::testing::internal::CaptureStderr();
  std::optional<QemuCaps> caps;
  std::string error;
  {
    FakeQmpServer server(dir.path / "args", 1);
    try {
      caps = ProbeCaps(qemu.string(), NoCache());
    } catch (const std::exception& e) {
      error = e.what();
    }
    EXPECT_EQ(server.errors_sent(), 1);
  }
  std::string warnings = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(caps) << error;
  EXPECT_EQ(caps->major, 7);
  EXPECT_TRUE(caps->thread_context) << "the answers are the real QEMU's";
  EXPECT_TRUE(Contains(warnings, "qlaunch: warning: cannot probe QEMU " + qemu.string() +
                                     ": QMP query failed: Parameter 'typename' is missing"))
      << warnings;
  EXPECT_TRUE(Contains(warnings, "probing once more")) << warnings;
}

TEST(ProbeCapsErrors, AQmpExchangeThatFailsTwiceIsReported) {
  TempDir dir;
  fs::path qemu = FlakyQemu(dir, 2);
  ::testing::internal::CaptureStderr();
  std::string msg;
  {
    FakeQmpServer server(dir.path / "args", 2);
    msg = MessageOf([&] { ProbeCaps(qemu.string(), NoCache()); });
    EXPECT_EQ(server.errors_sent(), 2);
  }
  std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(Contains(msg, "cannot probe QEMU " + qemu.string() + ": QMP query failed: Parameter 'typename' is missing"))
      << msg;
  EXPECT_TRUE(Contains(warnings, "probing once more")) << warnings;
  std::ifstream runs(dir.path / "runs");
  int n = 0;
  runs >> n;
  EXPECT_EQ(n, 2) << "one probe and exactly one retry";
}

// A QEMU that crashes before its QMP socket answers (seen once in CI: SIGSEGV at start-up, eight
// starts probing at once) is tried once more; one that exits with its own error is not.
TEST(ProbeCaps, AQemuThatCrashesAtStartIsTriedOnceMore) {
  if (::access(kQemu72, X_OK) != 0) GTEST_SKIP() << kQemu72 << " is not installed (apt-get install qemu-system-x86)";
  TempDir dir;
  const fs::path count = dir.path / "runs";
  fs::path qemu = WriteScript(dir.path / "qemu", "n=$(cat " + count.string() + " 2>/dev/null || echo 0); echo $((n + 1)) > " +
                                                     count.string() + "\nif [ $n -lt 1 ]; then kill -SEGV $$; fi\nexec " +
                                                     kQemu72 + " \"$@\"");
  ::testing::internal::CaptureStderr();
  std::optional<QemuCaps> caps;
  std::string error;
  try {
    caps = ProbeCaps(qemu.string(), NoCache());
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::string warnings = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(caps) << error;
  EXPECT_EQ(caps->major, 7);
  EXPECT_TRUE(Contains(warnings, "it exited before its QMP socket answered; QEMU was killed by signal Segmentation fault"))
      << warnings;
  EXPECT_TRUE(Contains(warnings, "probing once more")) << warnings;
  int n = 0;
  std::ifstream(count) >> n;
  EXPECT_EQ(n, 2);
}

TEST(ProbeCapsErrors, AQemuThatExitsWithItsOwnErrorIsNotTriedAgain) {
  TempDir dir;
  const fs::path count = dir.path / "runs";
  fs::path qemu = WriteScript(dir.path / "qemu", "n=$(cat " + count.string() + " 2>/dev/null || echo 0); echo $((n + 1)) > " +
                                                     count.string() + "\necho 'no such machine' >&2; exit 1");
  ::testing::internal::CaptureStderr();
  std::string msg = MessageOf([&] { ProbeCaps(qemu.string(), NoCache()); });
  std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(Contains(msg, "status 1")) << msg;
  EXPECT_FALSE(Contains(warnings, "probing once more")) << warnings;
  int n = 0;
  std::ifstream(count) >> n;
  EXPECT_EQ(n, 1);
}

TEST(ProbeCapsErrors, TempDirIsRemoved) {
  // Both after a failure and after a success nothing named qlaunch-probe-* stays behind.
  TempDir tmp;
  std::string old = getenv("TMPDIR") ? getenv("TMPDIR") : "";
  ::setenv("TMPDIR", tmp.path.c_str(), 1);
  MessageOf([] { ProbeCaps("/bin/false", NoCache()); });
  const bool have_qemu = ::access(kQemu72, X_OK) == 0;
  if (have_qemu) ProbeCaps(kQemu72, NoCache());
  if (old.empty()) ::unsetenv("TMPDIR");
  else ::setenv("TMPDIR", old.c_str(), 1);
  EXPECT_TRUE(fs::is_empty(tmp.path));
  if (!have_qemu) GTEST_SKIP() << "the success half needs " << kQemu72 << " (scripts/setup installs qemu-system-x86)";
}

}  // namespace
}  // namespace qlaunch::qemu
