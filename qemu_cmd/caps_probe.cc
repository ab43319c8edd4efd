// ProbeCaps: runs the binary as
//   <binary> -machine none -S -nodefaults -no-user-config -display none
//            -qmp unix:<tmpdir>/qmp.sock,server=on,wait=off
// (QEMU 5.2 and 7.2 both accept the on/off spelling), asks over QMP, quits it, and caches the
// answer per binary (qemu_cmd/caps_cache.h).
#include "qemu_cmd/caps_probe.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <nlohmann/json.hpp>

#include "qemu_cmd/caps_cache.h"
#include "qemu_cmd/kvm_device.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::qemu {

namespace fs = std::filesystem;
namespace bp = boost::process;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

[[noreturn]] void Fail(const std::string& binary, const std::string& why) {
  throw std::runtime_error("cannot probe QEMU " + binary + ": " + why);
}

// The QEMU ran and talked QMP, but a question got an error or an answer we could not read.
// Worth one more try with a fresh QEMU (see ProbeCaps); a binary that always answers wrongly
// fails the second time too.
class QueryFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Killed by a signal that says it crashed (not one that someone sent to stop it).
bool CrashedBySignal(int status) {
  if (!WIFSIGNALED(status)) return false;
  const int sig = WTERMSIG(status);
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGILL || sig == SIGFPE;
}

// A private directory for the QMP socket and QEMU's output; removed with everything in it.
class TempDir {
 public:
  TempDir() {
    fs::path base;
    std::error_code ec;
    base = fs::temp_directory_path(ec);
    // sun_path holds 107 bytes; keep "<dir>/qmp.sock" well inside it.
    if (ec || base.string().size() > 60) base = "/tmp";
    std::string tmpl = (base / "qlaunch-probe-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory in " + base.string() +
                                                          ": " + std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string LogTail(const fs::path& log, size_t max_bytes = 2000) {
  std::ifstream in(log, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > max_bytes) {
    text.erase(0, text.size() - max_bytes);
    if (auto nl = text.find('\n'); nl != std::string::npos) text.erase(0, nl + 1);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string ExitDescription(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "stopped";
}

std::string WithLog(std::string why, const fs::path& log) {
  std::string tail = LogTail(log);
  return tail.empty() ? why + " (it printed nothing)" : why + "; its output ends with:\n" + tail;
}

// Waits for the child to exit; kills it when it has not by the deadline.
void Reap(bp::child& child, Clock::time_point deadline) {
  std::error_code ec;
  while (child.running(ec) && !ec && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(2));
  if (child.running(ec) && !ec) {
    // Not child.terminate(): Boost 1.74 reaps with WNOHANG there and then refuses to wait,
    // which leaves a zombie. Kill, then wait for real.
    ::kill(child.id(), SIGKILL);
    child.wait(ec);
  }
}

std::set<std::string> Names(const json& list) {
  std::set<std::string> out;
  if (list.is_array())
    for (const auto& e : list)
      if (e.is_object() && e.contains("name") && e["name"].is_string()) out.insert(e["name"].get<std::string>());
  return out;
}

milliseconds Remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return std::max(left, milliseconds(1));
}

// The questions, once QMP is up. Throws QmpError / QmpTimeout.
CachedCaps Ask(QmpClient& qmp, Clock::time_point deadline) {
  CachedCaps out;
  QemuCaps& c = out.caps;
  auto ask = [&](const std::string& cmd, const json& args = nullptr) { return qmp.Execute(cmd, args, Remaining(deadline)); };
  auto props = [&](const std::string& type) { return Names(ask("qom-list-properties", {{"typename", type}})); };

  ask("qmp_capabilities");

  json v = ask("query-version");
  c.major = v.at("qemu").at("major").get<int>();
  c.minor = v.at("qemu").at("minor").get<int>();
  c.micro = v.at("qemu").at("micro").get<int>();
  c.package = v.value("package", "");
  c.package.erase(0, c.package.find_first_not_of(' '));  // old QEMUs put a space in front

  std::set<std::string> types = Names(ask("qom-list-types"));
  c.thread_context = types.count("thread-context") > 0;
  c.memfd = types.count("memory-backend-memfd") > 0;

  std::set<std::string> file_props = props("memory-backend-file");
  c.prealloc_context = file_props.count("prealloc-context") > 0;
  c.prealloc_threads = file_props.count("prealloc-threads") > 0;
  c.backend_reserve = file_props.count("reserve") > 0;
  c.virtio_mem = types.count("virtio-mem-pci") > 0;
  if (c.virtio_mem) c.virtio_mem_prealloc = props("virtio-mem-pci").count("prealloc") > 0;

  if (c.memfd) {
    std::set<std::string> memfd_props = props("memory-backend-memfd");
    c.memfd_hugetlb = memfd_props.count("hugetlb") > 0 && memfd_props.count("hugetlbsize") > 0;
  }

  // The abstract base type "machine" lists its class properties without instantiating a
  // machine; "memory-backend" is one of them from 5.0 on.
  c.machine_memory_backend = props("machine").count("memory-backend") > 0;

  // -sandbox exists only when QEMU was built with seccomp; otherwise QEMU answers
  // "invalid option name: sandbox".
  try {
    json opts = ask("query-command-line-options", {{"option", "sandbox"}});
    c.sandbox = opts.is_array() && !opts.empty();
  } catch (const QmpTimeout&) {
    throw;
  } catch (const QmpError&) {
    c.sandbox = false;
  }

  // JSON syntax for -object came with the QAPI-fied -object in 6.0. QMP has no direct
  // answer for it (query-command-line-options does not describe value syntax), so it is
  // derived from the version.
  c.json_object = c.VersionAtLeast(6, 0);

  // KVM: with -machine none no accelerator is initialised, so query-kvm's "enabled" is always
  // false here. "present" says QEMU was built with KVM; whether this host lets us use it is a
  // property of the host, decided by opening /dev/kvm (qemu_cmd/kvm_device.h) each time caps are
  // handed out, cached or not.
  try {
    json kvm = ask("query-kvm");
    out.kvm_compiled = kvm.value("present", false);
  } catch (const QmpTimeout&) {
    throw;
  } catch (const QmpError&) {
    out.kvm_compiled = false;
  }
  return out;
}

CachedCaps RunProbe(const std::string& binary, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  TempDir dir;
  const fs::path sock = dir.path() / "qmp.sock";
  const fs::path log = dir.path() / "qemu.log";

  std::vector<std::string> args = {
      "-machine", "none", "-S", "-nodefaults", "-no-user-config", "-display", "none",
      "-qmp",     "unix:" + sock.string() + ",server=on,wait=off",
  };
  bp::child child;
  const pid_t parent = ::getpid();
  try {
    // The probing QEMU dies with us: a signal that ends qlaunch mid-probe must not leave it
    // waiting on its socket forever.
    auto die_with_parent = [parent](auto&) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
    };
    child = bp::child(bp::exe = binary, bp::args = args, bp::std_in < bp::null,
                      (bp::std_out & bp::std_err) > log.string(), bp::extend::on_exec_setup = die_with_parent);
  } catch (const bp::process_error& e) {
    Fail(binary, std::string("cannot start it: ") + e.what());
  }

  auto failed = [&](const std::string& why, bool query = false) {
    // Collect the exit status first if it already died, so the message can say how.
    int status = 0;
    bool exited = false;
    std::error_code ec;
    if (!child.running(ec)) {
      status = child.native_exit_code();
      exited = true;
    } else {
      Reap(child, Clock::now());
    }
    const std::string what = WithLog(exited ? why + "; QEMU " + ExitDescription(status) : why, log);
    // A QEMU that crashed (rather than exiting with its own error) is worth one more try too: once,
    // in a CI run with eight starts probing at once, Debian's QEMU 7.2 died of SIGSEGV at
    // start-up before its QMP socket answered.
    if (query || (exited && CrashedBySignal(status))) throw QueryFailed("cannot probe QEMU " + binary + ": " + what);
    Fail(binary, what);
  };

  // Connect in short slices so that a QEMU that dies at start-up is noticed at once rather
  // than after the whole timeout.
  std::unique_ptr<QmpClient> qmp;
  while (!qmp) {
    std::error_code ec;
    if (!child.running(ec)) failed("it exited before its QMP socket answered");
    if (Clock::now() >= deadline) failed("no QMP greeting within " + std::to_string(timeout.count()) + " ms");
    try {
      qmp = QmpClient::Connect(sock.string(), std::min(Remaining(deadline), milliseconds(200)));
    } catch (const QmpTimeout&) {
    } catch (const QmpError& e) {
      failed(e.what());
    }
  }

  CachedCaps caps;
  try {
    caps = Ask(*qmp, deadline);
  } catch (const QmpTimeout& e) {  // not retried: a second wait would double the delay
    failed(std::string("QMP query failed: ") + e.what());
  } catch (const QmpError& e) {
    failed(std::string("QMP query failed: ") + e.what(), true);
  } catch (const json::exception& e) {
    failed(std::string("unexpected QMP answer: ") + e.what(), true);
  }
  caps.caps.binary = binary;

  try {
    qmp->Execute("quit", nullptr, milliseconds(2000));
  } catch (const QmpError&) {
    // It may close the socket before answering; the exit below is what counts.
  }
  qmp.reset();
  Reap(child, Clock::now() + milliseconds(3000));
  return caps;
}

void CheckBinary(const std::string& binary) {
  if (binary.empty()) throw std::runtime_error("cannot probe QEMU: no binary given");
  struct stat st;
  if (::stat(binary.c_str(), &st) != 0) Fail(binary, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) Fail(binary, "it is a directory");
  if (!S_ISREG(st.st_mode)) Fail(binary, "it is not a regular file");
  if (::access(binary.c_str(), X_OK) != 0) Fail(binary, std::string("it is not executable: ") + std::strerror(errno));
}

}  // namespace

QemuCaps ProbeCaps(const std::string& spelled, const ProbeOptions& opts) {
  // A bare name ("qemu-system-x86_64") is looked up in $PATH, like a shell would.
  std::string binary = spelled;
  if (!spelled.empty() && spelled.find('/') == std::string::npos) {
    boost::filesystem::path found = bp::search_path(spelled);
    if (found.empty()) Fail(spelled, "not found in $PATH");
    binary = found.string();
  }
  CheckBinary(binary);
  fs::path cache_dir = opts.cache_dir.empty() ? DefaultCapsCacheDir() : opts.cache_dir;
  std::optional<CapsCacheKey> key;
  if (opts.use_cache) key = MakeCapsCacheKey(binary);  // taken before probing: a change mid-probe makes it stale

  std::optional<CachedCaps> entry;
  if (key) entry = LoadCachedCaps(cache_dir, *key);
  if (!entry) {
    try {
      entry = RunProbe(binary, opts.timeout);
    } catch (const QueryFailed& e) {
      // Once, in a CI run of some hundreds of probes, Debian's QEMU 7.2 answered our
      // well-formed qom-list-properties with "Parameter 'typename' is missing"; once it crashed
      // before answering at all. Probing is free of side effects, so a failed exchange or a
      // crash is tried once more with a fresh QEMU.
      std::fprintf(stderr, "qlaunch: warning: %s; probing once more\n", e.what());
      entry = RunProbe(binary, opts.timeout);
    }
    if (key) StoreCachedCaps(cache_dir, *key, *entry);
  }
  QemuCaps caps = entry->caps;
  caps.binary = spelled;  // as the caller spells it: that is what the launcher will exec
  caps.kvm = entry->kvm_compiled && KvmUsable();
  return caps;
}

}  // namespace qlaunch::qemu
