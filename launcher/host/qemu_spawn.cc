#include "launcher/host/qemu_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <linux/capability.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>

namespace qlaunch::launcher {

namespace bp = boost::process;
namespace fs = std::filesystem;

namespace {

bool FdInUse(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

// A CPU mask for sched_setaffinity, allocated before fork (the child must not allocate).
struct CpuMask {
  cpu_set_t* set = nullptr;
  size_t bytes = 0;
  explicit CpuMask(const IdSet& cpus) {
    if (cpus.Empty()) return;
    int count = static_cast<int>(cpus.Max()) + 1;
    set = CPU_ALLOC(count);
    bytes = CPU_ALLOC_SIZE(count);
    CPU_ZERO_S(bytes, set);
    for (unsigned cpu : cpus) CPU_SET_S(cpu, bytes, set);
  }
  ~CpuMask() {
    if (set) CPU_FREE(set);
  }
  CpuMask(const CpuMask&) = delete;
  CpuMask& operator=(const CpuMask&) = delete;
};

// In the child: a failed step of the privilege drop ends it before exec, with the reason on
// its stderr (the log). Async-signal-safe.
[[noreturn]] void DieBeforeExec(const char* step) {
  const char* why = ::strerrordesc_np(errno);
  for (const char* s : {"qlaunch: cannot drop QEMU's privileges: ", step, ": ", why ? why : "?", "\n"})
    (void)!::write(2, s, std::strlen(s));
  ::_exit(126);
}

// The highest capability number of this kernel (/proc/sys/kernel/cap_last_cap).
int CapLastCap() {
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  int n = 0;
  return in >> n && n > 0 ? n : 40;
}

// Runs in the child between fork and exec: async-signal-safe calls only.
struct ChildSetup : bp::extend::handler {
  const int* inherit = nullptr;
  size_t inherit_count = 0;
  const CpuMask* mask = nullptr;
  int max_fd = 0;  // fallback when close_range(CLOSE_RANGE_CLOEXEC) is unavailable
  const DropTo* drop = nullptr;
  int cap_last = 40;
  uint64_t memlock_bytes = 0;

  int cgroup_procs_fd = -1;
  bool block_stop_signals = false;
  pid_t die_with = 0;  // > 0: SIGKILL when this parent goes (PR_SET_PDEATHSIG)

  // After the drop: a uid change clears the parent-death signal. If the parent died before the
  // prctl, nobody would send it: getppid() no longer names it then, and the child ends itself.
  void DieWithParent() const {
    if (die_with <= 0) return;
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) DieBeforeExec("PR_SET_PDEATHSIG");
    if (::getppid() != die_with) {
      static constexpr char kMsg[] = "qlaunch: QEMU not started: its supervisor died while spawning it\n";
      (void)!::write(2, kMsg, sizeof kMsg - 1);
      ::_exit(125);
    }
  }

  void DropPrivileges() const {
    if (cgroup_procs_fd >= 0 && ::write(cgroup_procs_fd, "0", 1) != 1) DieBeforeExec("joining its cgroup");
    if (memlock_bytes) {  // the pre-flight checked that this host lets us (launcher/lifecycle/start_checks.cc)
      struct rlimit lim {};
      if (::getrlimit(RLIMIT_MEMLOCK, &lim) != 0 || (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < memlock_bytes)) {
        lim = {memlock_bytes, memlock_bytes};
        if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) DieBeforeExec("setrlimit(RLIMIT_MEMLOCK)");
      } else if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < memlock_bytes) {
        lim.rlim_cur = memlock_bytes;
        if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) DieBeforeExec("setrlimit(RLIMIT_MEMLOCK)");
      }
    }
    struct rlimit nofile {};
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
      nofile.rlim_cur = nofile.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (drop) {
      for (int cap = 0; cap <= cap_last; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) DieBeforeExec("PR_CAPBSET_DROP");
      if (::setgroups(drop->groups.size(), drop->groups.data()) != 0) DieBeforeExec("setgroups");
      if (::setresgid(drop->gid, drop->gid, drop->gid) != 0) DieBeforeExec("setresgid");
      if (::setresuid(drop->uid, drop->uid, drop->uid) != 0) DieBeforeExec("setresuid");
      // setresuid away from 0 empties the permitted and effective sets; inheritable stays.
      __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct none[2] = {};
      if (::syscall(SYS_capset, &header, none) != 0) DieBeforeExec("capset");
      if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        DieBeforeExec("PR_CAP_AMBIENT_CLEAR_ALL");
      if (::setuid(0) == 0) {  // must be impossible now
        errno = EPERM;
        DieBeforeExec("setuid(0) still works");
      }
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) DieBeforeExec("PR_SET_NO_NEW_PRIVS");
  }

  template <typename Executor>
  void on_exec_setup(Executor&) const {
    ::setsid();
    sigset_t mask_set;
    sigemptyset(&mask_set);
    if (block_stop_signals)
      for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask_set, sig);
    ::sigprocmask(SIG_SETMASK, &mask_set, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::sigaction(sig, &dfl, nullptr);
    if (mask && mask->set) ::sched_setaffinity(0, mask->bytes, mask->set);
    if (::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    for (size_t i = 0; i < inherit_count; ++i) ::fcntl(inherit[i], F_SETFD, 0);
    DropPrivileges();
    DieWithParent();
  }
};

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : std::to_string(sig);
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + SignalName(WTERMSIG(status)) + ")";
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace

int FreeFdBlock(int from, int count) {
  for (int n = std::max(from, 0);; ++n) {
    int i = 0;
    while (i < count && !FdInUse(n + i)) ++i;
    if (i == count) return n;
    n += i;  // the first busy one; continue after it
  }
}

FdReservation::FdReservation(int first, int count) {
  for (int fd = first; fd < first + count; ++fd)
    if (FdInUse(fd))
      throw std::runtime_error("cannot reserve fd " + std::to_string(fd) + " for a memfd QEMU inherits: it is in use");
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0 && null_fd < first + count) {  // it took one of our numbers: move it above
    int above = ::fcntl(null_fd, F_DUPFD_CLOEXEC, first + count);
    ::close(null_fd);
    null_fd = above;
  }
  if (null_fd < 0) throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  for (int fd = first; fd < first + count; ++fd) {
    if (FdInUse(fd) || ::dup3(null_fd, fd, O_CLOEXEC) < 0) {
      ::close(null_fd);
      Close();
      throw std::runtime_error("cannot reserve fd " + std::to_string(fd) + " for a memfd QEMU inherits: it is in use");
    }
    fds_.push_back(fd);
  }
  ::close(null_fd);
}

FdReservation::FdReservation(FdReservation&& o) noexcept : fds_(std::move(o.fds_)) { o.fds_.clear(); }

FdReservation& FdReservation::operator=(FdReservation&& o) noexcept {
  if (this != &o) {
    Close();
    fds_ = std::move(o.fds_);
    o.fds_.clear();
  }
  return *this;
}

FdReservation::~FdReservation() { Close(); }

void FdReservation::Place(int target, int fd) {
  if (std::find(fds_.begin(), fds_.end(), target) == fds_.end())
    throw std::logic_error("fd " + std::to_string(target) + " is not reserved");
  if (::dup3(fd, target, O_CLOEXEC) < 0)
    throw std::runtime_error("dup3 onto fd " + std::to_string(target) + ": " + std::strerror(errno));
}

void FdReservation::Close() {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

struct QemuProcess::Impl {
  pid_t pid = 0;
  std::mutex mu;
  bool reaped = false;
  bool detached = false;
  std::string exit_description;

  void ReapLocked(int status) {
    reaped = true;
    exit_description = DescribeStatus(status);
  }
};

QemuProcess::QemuProcess(std::unique_ptr<Impl> impl) : impl_(std::move(impl)), pid_(impl_->pid) {
  ref_ = RefOf(pid_);
}

std::unique_ptr<QemuProcess> QemuProcess::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw std::invalid_argument("QemuProcess::Spawn: empty argv");
  int log_fd = ::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) throw std::runtime_error("cannot create " + spec.log_file.string() + ": " + std::strerror(errno));
  FILE* log = ::fdopen(log_fd, "a");
  if (!log) {
    ::close(log_fd);
    throw std::runtime_error("fdopen " + spec.log_file.string() + ": " + std::strerror(errno));
  }
  struct CloseLog {
    FILE* f;
    ~CloseLog() { std::fclose(f); }
  } close_log{log};

  CpuMask mask(spec.affinity);
  ChildSetup setup;
  setup.inherit = spec.inherit_fds.data();
  setup.inherit_count = spec.inherit_fds.size();
  setup.mask = &mask;
  setup.drop = spec.drop ? &*spec.drop : nullptr;
  setup.cap_last = CapLastCap();
  setup.memlock_bytes = spec.memlock_bytes;
  setup.cgroup_procs_fd = spec.cgroup_procs_fd;
  setup.block_stop_signals = spec.block_stop_signals;
  setup.die_with = spec.die_with_parent ? ::getpid() : 0;
  struct rlimit nofile {};
  setup.max_fd = ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                     ? static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 1 << 20))
                     : 65536;

  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  std::error_code ec;
  bp::child child(bp::exe = spec.argv[0], bp::args = args, bp::std_in < bp::null,
                  (bp::std_out & bp::std_err) > log, setup, ec);
  if (ec || !child.valid())
    throw std::runtime_error("cannot start " + spec.argv[0] + (spec.drop ? " as uid " + std::to_string(spec.drop->uid) : "") +
                             ": " + (ec ? ec.message() : "spawn failed"));
  auto impl = std::make_unique<Impl>();
  impl->pid = child.id();
  child.detach();  // from here on we wait for it ourselves (waitpid), Boost no longer tracks it
  return std::unique_ptr<QemuProcess>(new QemuProcess(std::move(impl)));
}

QemuProcess::~QemuProcess() {
  if (impl_ && !impl_->detached) Kill();
}

std::optional<std::string> QemuProcess::ExitDescription() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->reaped) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) impl_->ReapLocked(status);
    else if (r < 0 && errno == ECHILD) {  // not ours to wait for (should not happen)
      impl_->reaped = true;
      impl_->exit_description = "is gone";
    }
  }
  if (!impl_->reaped) return std::nullopt;
  return impl_->exit_description;
}

void QemuProcess::Kill() {
  std::lock_guard lock(impl_->mu);
  if (impl_->reaped) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  if (r == pid_) impl_->ReapLocked(status);
  else impl_->reaped = true;
}

void QemuProcess::SendKill() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->reaped && !impl_->detached) ::kill(pid_, SIGKILL);
}

void QemuProcess::Detach() {
  std::lock_guard lock(impl_->mu);
  impl_->detached = true;
}

std::string LogTail(const fs::path& log, size_t max_lines, size_t max_bytes) {
  std::ifstream in(log, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(max_bytes) ? size - max_bytes : 0;
  in.seekg(start);
  std::string text(static_cast<size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t pos = text.size();
  for (size_t lines = 0; lines < max_lines && pos != std::string::npos && pos > 0; ++lines)
    pos = text.rfind('\n', pos - 1);
  if (pos != std::string::npos && pos < text.size() && text[pos] == '\n') ++pos;
  if (pos == std::string::npos) pos = 0;
  return text.substr(pos);
}

size_t SetProcessAffinity(pid_t pid, const IdSet& cpus) {
  CpuMask mask(cpus);
  if (!mask.set) throw std::invalid_argument("SetProcessAffinity: empty CPU set");
  size_t changed = 0;
  std::string first_error;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    pid_t tid = static_cast<pid_t>(std::strtol(it->path().filename().c_str(), nullptr, 10));
    if (tid <= 0) continue;
    if (::sched_setaffinity(tid, mask.bytes, mask.set) == 0) ++changed;
    else if (errno != ESRCH && first_error.empty()) first_error = std::strerror(errno);
  }
  if (changed == 0)
    throw std::runtime_error("cannot set the CPU affinity of pid " + std::to_string(pid) + " to " + cpus.ToString() +
                             ": " + (first_error.empty() ? "no threads" : first_error));
  return changed;
}

}  // namespace qlaunch::launcher
