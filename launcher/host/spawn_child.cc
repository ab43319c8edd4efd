#include "launcher/host/spawn_child.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "launcher/host/qemu_mounts.h"

extern char** environ;

namespace qlaunch::launcher {

CpuMask::CpuMask(const IdSet& cpus) {
  if (cpus.Empty()) return;
  int count = static_cast<int>(cpus.Max()) + 1;
  set = CPU_ALLOC(count);
  bytes = CPU_ALLOC_SIZE(count);
  CPU_ZERO_S(bytes, set);
  for (unsigned cpu : cpus) CPU_SET_S(cpu, bytes, set);
}

CpuMask::~CpuMask() {
  if (set) CPU_FREE(set);
}

namespace {

// struct clone_args up to its cgroup field (CLONE_ARGS_SIZE_VER2), and the flag: glibc 2.36 has
// no clone3 wrapper, and <linux/sched.h> does not mix with <sched.h> in every version.
struct CloneArgs {
  uint64_t flags = 0, pidfd = 0, child_tid = 0, parent_tid = 0, exit_signal = 0, stack = 0, stack_size = 0,
           tls = 0, set_tid = 0, set_tid_size = 0, cgroup = 0;
};
constexpr uint64_t kCloneIntoCgroup = 0x200000000ULL;

// The highest capability number of this kernel (/proc/sys/kernel/cap_last_cap).
int CapLastCap() {
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  int n = 0;
  return in >> n && n > 0 ? n : 40;
}

// In the child: a failed step of the privilege drop ends it before exec, with the reason on
// its stderr (the log). Async-signal-safe.
[[noreturn]] void DieBeforeExec(const char* step, const char* what = "qlaunch: cannot drop QEMU's privileges: ",
                                 const char* hint = "") {
  const char* why = ::strerrordesc_np(errno);
  for (const char* s : {what, step, ": ", why ? why : "?", hint, "\n"})
    (void)!::write(2, s, std::strlen(s));
  ::_exit(126);
}

// Everything the child reads, prepared before the clone.
struct Child {
  const SpawnSpec* spec = nullptr;
  std::vector<char*> argv;
  const CpuMask* mask = nullptr;
  int log_fd = -1, null_fd = -1, report_fd = -1;  // report_fd: the exec-error pipe's write end
  bool join_by_write = false;  // not born in spec->cgroup_fd: join it by writing cgroup.procs
  int cap_last = 40;
  int max_fd = 0;  // fallback when close_range(CLOSE_RANGE_CLOEXEC) is unavailable
  pid_t parent = 0;

  void Signals() const {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction cur {};
      if (::sigaction(sig, nullptr, &cur) == 0 && cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)
        ::sigaction(sig, &dfl, nullptr);
    }
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::sigaction(sig, &dfl, nullptr);
    sigset_t mask_set;
    sigemptyset(&mask_set);
    if (spec->block_stop_signals)
      for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask_set, sig);
    ::sigprocmask(SIG_SETMASK, &mask_set, nullptr);
  }

  void Fds() const {
    if (::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
      for (int fd = 3; fd < max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    for (int fd : spec->inherit_fds) ::fcntl(fd, F_SETFD, 0);
  }

  void Limits() const {
    if (const uint64_t bytes = spec->memlock_bytes) {  // the pre-flight checked that this host lets us
      struct rlimit lim {};
      if (::getrlimit(RLIMIT_MEMLOCK, &lim) != 0 || (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < bytes)) {
        lim = {bytes, bytes};
        if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) DieBeforeExec("setrlimit(RLIMIT_MEMLOCK)");
      } else if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < bytes) {
        lim.rlim_cur = bytes;
        if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) DieBeforeExec("setrlimit(RLIMIT_MEMLOCK)");
      }
    }
    struct rlimit nofile {};
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
      nofile.rlim_cur = nofile.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &nofile);
    }
  }

  void DropPrivileges() const {
    const DropTo* drop = spec->drop ? &*spec->drop : nullptr;
    if (drop) {
      for (int cap = 0; cap <= cap_last; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) DieBeforeExec("PR_CAPBSET_DROP");
      if (::syscall(SYS_setgroups, drop->groups.size(), drop->groups.data()) != 0) DieBeforeExec("setgroups");
      if (::syscall(SYS_setresgid, drop->gid, drop->gid, drop->gid) != 0) DieBeforeExec("setresgid");
      if (::syscall(SYS_setresuid, drop->uid, drop->uid, drop->uid) != 0) DieBeforeExec("setresuid");
      // setresuid away from 0 empties the permitted and effective sets; inheritable stays.
      __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct none[2] = {};
      if (::syscall(SYS_capset, &header, none) != 0) DieBeforeExec("capset");
      if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        DieBeforeExec("PR_CAP_AMBIENT_CLEAR_ALL");
      if (::syscall(SYS_setuid, 0) == 0) {  // must be impossible now
        errno = EPERM;
        DieBeforeExec("setuid(0) still works");
      }
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) DieBeforeExec("PR_SET_NO_NEW_PRIVS");
  }

  // After the drop: a uid change clears the parent-death signal. If the parent died before the
  // prctl, nobody would send it: getppid() no longer names it then, and the child ends itself.
  void DieWithParent() const {
    if (!spec->die_with_parent) return;
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) DieBeforeExec("PR_SET_PDEATHSIG");
    if (::getppid() != parent) {
      static constexpr char kMsg[] = "qlaunch: QEMU not started: its supervisor died while spawning it\n";
      (void)!::write(2, kMsg, sizeof kMsg - 1);
      ::_exit(125);
    }
  }

  [[noreturn]] void Run() const {
    if (::dup2(null_fd, 0) < 0 || ::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0) Report();
    if (join_by_write) {
      const int procs = ::openat(spec->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
      if (procs < 0 || ::write(procs, "0", 1) != 1) DieBeforeExec("joining its cgroup");
    }
    ::setsid();
    Signals();
    if (mask->set) ::sched_setaffinity(0, mask->bytes, mask->set);
    Fds();
    Limits();
    if (spec->mounts)
      if (const char* failed = EnterQemuMounts(*spec->mounts))
        DieBeforeExec(failed, "qlaunch: cannot give QEMU a mount namespace of its own: ",
                      " (a host that allows no mount namespaces: QLAUNCH_ISOLATION=off starts it without)");
    DropPrivileges();
    DieWithParent();
    ::execve(argv[0], argv.data(), environ);
    Report();
  }

  // exec failed: errno to the parent, which throws with it.
  [[noreturn]] void Report() const {
    const int err = errno;
    (void)!::write(report_fd, &err, sizeof err);
    ::_exit(127);
  }
};

// fd moved to a number above 2 (stdio is the child's to set), close-on-exec.
int AboveStdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

// clone3, into `cgroup` when >= 0; a plain fork (and *join_by_write) where this kernel cannot.
pid_t Clone(int cgroup, bool* join_by_write) {
  CloneArgs args;
  args.exit_signal = SIGCHLD;
  if (cgroup >= 0) {
    args.flags = kCloneIntoCgroup;
    args.cgroup = static_cast<uint64_t>(cgroup);
  }
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0 && (errno == ENOSYS || errno == E2BIG || (cgroup >= 0 && errno == EINVAL))) {
    *join_by_write = cgroup >= 0;
    pid = ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  }
  return static_cast<pid_t>(pid);
}

}  // namespace

pid_t CloneAndExec(const SpawnSpec& spec) {
  CpuMask mask(spec.affinity);
  Child child;
  child.spec = &spec;
  for (const std::string& a : spec.argv) child.argv.push_back(const_cast<char*>(a.c_str()));
  child.argv.push_back(nullptr);
  child.mask = &mask;
  child.cap_last = CapLastCap();
  child.parent = ::getpid();
  struct rlimit nofile {};
  child.max_fd = ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                     ? static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 1 << 20))
                     : 65536;
  UniqueFd log{AboveStdio(::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600))};
  if (log.get() < 0) throw std::runtime_error("cannot create " + spec.log_file.string() + ": " + std::strerror(errno));
  UniqueFd null{AboveStdio(::open("/dev/null", O_RDONLY | O_CLOEXEC))};
  int pipe_fds[2];
  if (null.get() < 0 || ::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot start " + spec.argv[0] + ": " + std::strerror(errno));
  UniqueFd report_read{AboveStdio(pipe_fds[0])}, report_write{AboveStdio(pipe_fds[1])};
  child.log_fd = log.get();
  child.null_fd = null.get();
  child.report_fd = report_write.get();

  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = Clone(spec.cgroup_fd, &child.join_by_write);
  if (pid == 0) child.Run();
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  const std::string as = spec.drop ? " as uid " + std::to_string(spec.drop->uid) : "";
  if (pid < 0)
    throw std::runtime_error("cannot start " + spec.argv[0] + as + ": " + std::strerror(clone_errno) +
                             (spec.cgroup_fd >= 0 ? " (cloning it into its cgroup)" : ""));
  report_write.Reset();
  int err = 0;
  ssize_t n;
  do n = ::read(report_read.get(), &err, sizeof err);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err)) {  // exec failed
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("cannot start " + spec.argv[0] + as + ": " + std::strerror(err));
  }
  return pid;
}

}  // namespace qlaunch::launcher
