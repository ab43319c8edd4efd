#include "launcher/bench/bench_starters.h"

#include "launcher/bench/bench_support.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "launcher/host/qemu_spawn.h"
#include "launcher/host/state_dir.h"
#include "numa/hugepage_sizes.h"
#include "numa/node_reader.h"
#include "numa/sysfs_files.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using bench::InterruptAction;
using bench::Left;
using bench::MsSince;
using bench::ThrowIfInterrupted;

namespace {


int CreateOutput(const fs::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

bool ChildRun::ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

std::string ChildRun::Describe() const {
  if (timed_out) return "timed out";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) +
           (abbrev ? std::string(" (SIG") + abbrev + ")" : "");
  }
  return "ended with wait status " + std::to_string(status);
}

std::string ChildRun::ErrTail() const {
  std::string tail = LogTail(err_file, 8);
  return tail.empty() ? "" : "; its stderr ends with:\n" + tail;
}

std::optional<std::string> FindProgram(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
  }
  return std::nullopt;
}

ChildRun RunChild(const std::vector<std::string>& argv, const fs::path& dir, const std::string& tag,
                  StartInterrupt* interrupt, milliseconds timeout, const std::function<void()>& meanwhile) {
  if (argv.empty()) throw std::invalid_argument("RunChild: empty argv");
  ThrowIfInterrupted(interrupt);
  // Resolved before the fork: the child only calls async-signal-safe functions.
  std::string exe = argv[0];
  if (exe.find('/') == std::string::npos) {
    std::optional<std::string> found = FindProgram(exe);
    if (!found) throw std::runtime_error(exe + ": command not found in $PATH");
    exe = *found;
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  ChildRun run;
  run.err_file = dir / (tag + ".err");
  const fs::path out_file = dir / (tag + ".out");
  struct Fds {
    int fd[3] = {-1, -1, -1};
    ~Fds() {
      for (int f : fd)
        if (f >= 0) ::close(f);
    }
  } fds;
  fds.fd[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fds.fd[0] < 0) throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  fds.fd[1] = CreateOutput(out_file);
  fds.fd[2] = CreateOutput(run.err_file);

  const Clock::time_point t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork for " + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    for (int i = 0; i < 3; ++i)
      if (::dup2(fds.fd[i], i) < 0) ::_exit(127);
    ::execv(exe.c_str(), cargv.data());
    const char* why = ::strerrordesc_np(errno);
    for (const char* s : {"cannot run ", exe.c_str(), ": ", why ? why : "?", "\n"})
      (void)!::write(2, s, std::strlen(s));
    ::_exit(127);
  }
  // SIGINT on the terminal reaches the child by itself; a signal sent to the bench alone is
  // passed on, so that qlaunch start (or virsh) cleans up as it would on a Ctrl-C.
  InterruptAction forward(interrupt, [pid] { ::kill(pid, SIGINT); });
  if (meanwhile) {
    try {
      meanwhile();
    } catch (...) {
      forward.Clear();
      ::kill(pid, SIGKILL);
      int status;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw;
    }
  }
  // A pidfd becomes readable the moment the child exits: the wait is as precise as a blocking
  // waitpid and can still time out.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  while (pidfd >= 0) {
    int wait_ms = -1;
    if (timeout.count() > 0) {
      wait_ms = static_cast<int>(Left(t0 + timeout).count());
      if (Clock::now() >= t0 + timeout) {
        ::kill(pid, SIGKILL);
        run.timed_out = true;
        break;
      }
    }
    pollfd p{pidfd, POLLIN, 0};
    int n = ::poll(&p, 1, wait_ms);
    if (n > 0 || (n < 0 && errno != EINTR)) break;
  }
  siginfo_t info{};
  while (::waitid(P_PID, pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  run.exited = Clock::now();
  run.forked = t0;
  run.ms = std::chrono::duration<double, std::milli>(run.exited - t0).count();
  // No more forwarding before the pid is reaped (after that it may be someone else's).
  forward.Clear();
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  if (pidfd >= 0) ::close(pidfd);
  run.out = ReadSmallFile(out_file).value_or("");
  return run;
}

std::vector<HugepageCount> ReadFreeHugepages(const fs::path& sys) {
  std::vector<HugepageCount> out;
  auto read_pools = [&out](const fs::path& dir, int node) {
    for (uint64_t bytes : numa::HugepageSizesIn(dir)) {
      const fs::path pool = dir / ("hugepages-" + std::to_string(bytes >> 10) + "kB");
      if (std::optional<uint64_t> free = numa::ReadNumberFile(pool / "free_hugepages"))
        out.push_back({node, bytes, *free});
    }
  };
  const fs::path node_dir = sys / "devices/system/node";
  std::error_code ec;
  if (fs::is_directory(node_dir, ec))
    for (unsigned id : numa::ReadNodeIds(node_dir))
      read_pools(node_dir / ("node" + std::to_string(id)) / "hugepages", static_cast<int>(id));
  if (out.empty()) read_pools(sys / "kernel/mm/hugepages", -1);
  return out;
}

void WaitHugepagesBack(const std::vector<HugepageCount>& baseline, milliseconds timeout,
                       const StartInterrupt& interrupt, const std::string& after, const fs::path& sys) {
  // At least as many free as before, not exactly: pages someone else gives back meanwhile must
  // not fail the bench; ours missing must.
  auto short_pools = [&] {
    std::vector<HugepageCount> now = ReadFreeHugepages(sys);
    std::string missing;
    for (const HugepageCount& want : baseline) {
      auto it = std::find_if(now.begin(), now.end(), [&](const HugepageCount& c) {
        return c.node == want.node && c.page_bytes == want.page_bytes;
      });
      const uint64_t free = it == now.end() ? 0 : it->free;
      if (free >= want.free) continue;
      missing += std::string(missing.empty() ? "" : ", ") +
                 (want.node < 0 ? std::string("host") : "node " + std::to_string(want.node)) + " " +
                 std::to_string(want.page_bytes >> 10) + " kB pages: " + std::to_string(free) + " free, " +
                 std::to_string(want.free) + " before";
    }
    return missing;
  };
  const auto deadline = Clock::now() + timeout;
  for (std::string missing = short_pools(); !missing.empty(); missing = short_pools()) {
    interrupt.ThrowIfInterrupted();
    if (Clock::now() >= deadline)
      throw std::runtime_error("hugepages not back within " + std::to_string(timeout.count() / 1000) + " s after " +
                               after + " (" + missing + "): is a process of that run still alive, or did " +
                               "something else take them?");
    std::this_thread::sleep_for(milliseconds(5));
  }
}

BenchWorkDir::BenchWorkDir() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  // sun_path holds 107 bytes: keep "<dir>/qemu/qmp.sock" well inside it.
  if (ec || base.string().size() > 60) base = "/tmp";
  std::string tmpl = (base / "qlaunch-bench-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot create a temporary directory " + tmpl + ": " + std::strerror(errno));
  path_ = tmpl;
  ::chmod(path_.c_str(), 0711);
}

BenchWorkDir::~BenchWorkDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace qlaunch::launcher
