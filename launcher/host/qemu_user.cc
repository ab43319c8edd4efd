#include "launcher/host/qemu_user.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/diagnostic.h"
#include "launcher/host/state_dir.h"
#include "launcher/host/uid_lease.h"

namespace qlaunch::launcher {

namespace {

std::optional<uid_t> Numeric(const std::string& s) {
  if (s.size() < 2 || s[0] != '+') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long v = std::strtoul(s.c_str() + 1, &end, 10);
  if (errno || !end || *end || v > 0xfffffffeul) return std::nullopt;
  return static_cast<uid_t>(v);
}

}  // namespace

QemuUser ResolveQemuUser(const std::string& user_flag, const domain::DomainDef& def) {
  QemuUser u;
  Diagnostic where;  // where the user came from, for errors
  std::string spec;
  const bool label = def.seclabel.present && def.seclabel.type == "static";
  if (!user_flag.empty()) {
    spec = user_flag;
    u.source = "--user";
    where.message = "--user " + user_flag + ": ";
  } else if (label) {
    spec = def.seclabel.label;
    u.source = "<seclabel> at " + def.file + ":" + std::to_string(def.seclabel.line);
    where.file = def.file;
    where.line = def.seclabel.line;
    where.element = "seclabel";
  } else {
    spec = kDefaultQemuUser;
    u.source = "default";
  }
  u.relabel = !def.seclabel.present || def.seclabel.relabel;
  auto fail = [&](const std::string& msg) {
    Diagnostic d = where;
    d.message += msg;
    throw DiagnosticError(d);
  };

  const size_t colon = spec.find(':');
  const std::string user = spec.substr(0, colon), group = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (user.empty() || (colon != std::string::npos && group.empty())) fail("expected USER[:GROUP], got '" + spec + "'");

  if (::geteuid() != 0) {
    // Not root: QEMU runs as us. Naming someone else cannot work.
    u.uid = ::geteuid();
    u.gid = ::getegid();
    const passwd* pw = ::getpwuid(u.uid);
    u.user = pw ? pw->pw_name : "+" + std::to_string(u.uid);
    u.group = "+" + std::to_string(u.gid);
    if (u.source == "default") return u;
    std::optional<uid_t> want = Numeric(user);
    if (!want) {
      const passwd* p = ::getpwnam(user.c_str());
      if (p) want = p->pw_uid;
    }
    if (!want || *want != u.uid)
      fail("qlaunch runs as " + u.user + ", not root, so QEMU runs as " + u.user + " too; only root can start it as " + user);
    return u;
  }

  if (u.source == "default" && IsolationOn()) {  // ids of its own, leased once the pre-flight runs
    u.lease = u.change = true;
    u.user = u.group = "(leased)";
    return u;
  }
  if (std::optional<uid_t> n = Numeric(user)) {
    u.uid = *n;
    u.user = user;
    const passwd* pw = ::getpwuid(u.uid);
    u.gid = pw ? pw->pw_gid : static_cast<gid_t>(u.uid);
  } else {
    const passwd* pw = ::getpwnam(user.c_str());
    if (!pw) {
      if (u.source == "default")
        fail(std::string("the QEMU user ") + kDefaultQemuUser +
             " does not exist: create it (scripts/setup and the .deb do: useradd --system --no-create-home "
             "--shell /usr/sbin/nologin --groups kvm " + kDefaultQemuUser + ") or name another with --user USER[:GROUP]");
      fail("no such user '" + user + "'");
    }
    u.uid = pw->pw_uid;
    u.gid = pw->pw_gid;
    u.user = user;
    int count = 64;
    std::vector<gid_t> groups(count);
    while (::getgrouplist(user.c_str(), pw->pw_gid, groups.data(), &count) < 0) groups.resize(count);
    groups.resize(count);
    u.groups = groups;
  }
  if (!group.empty()) {
    if (std::optional<uid_t> g = Numeric(group)) {
      u.gid = static_cast<gid_t>(*g);
    } else {
      const struct group* gr = ::getgrnam(group.c_str());
      if (!gr) fail("no such group '" + group + "'");
      u.gid = gr->gr_gid;
    }
    u.group = group;
  } else {
    const struct group* gr = ::getgrgid(u.gid);
    u.group = gr ? gr->gr_name : "+" + std::to_string(u.gid);
  }
  if (u.groups.empty()) u.groups.push_back(u.gid);
  u.change = u.uid != 0;
  if (u.uid == 0)
    std::fprintf(stderr,
                 "qlaunch: warning: QEMU runs as root with every capability (%s): a guest that escapes into QEMU "
                 "owns this host\n",
                 u.source.c_str());
  return u;
}

namespace {

std::vector<gid_t> LeasedGroups(gid_t gid, const std::vector<gid_t>& file_groups) {
  std::vector<gid_t> groups{gid};
  if (const struct group* kvm = ::getgrnam("kvm")) groups.push_back(kvm->gr_gid);
  groups.insert(groups.end(), file_groups.begin(), file_groups.end());
  return groups;
}

}  // namespace

void LeaseQemuUser(QemuUser* u, const domain::DomainDef& def, const std::filesystem::path& domain_dir) {
  if (!u->lease) return;
  const uint32_t id = LeaseId("domain:" + def.name + ":" + def.uuid, domain_dir);
  u->uid = static_cast<uid_t>(id);
  u->gid = static_cast<gid_t>(id);
  u->user = u->group = "+" + std::to_string(id);
  u->groups = LeasedGroups(u->gid, {});
}

QemuUser RecordedQemuUser(const std::filesystem::path& domain_dir, const domain::DomainDef& def) {
  std::string spec = ReadSmallFile(domain_dir / "user").value_or("");
  while (!spec.empty() && (spec.back() == '\n' || spec.back() == ' ')) spec.pop_back();
  const std::optional<DomainLease> lease = ReadDomainLease(domain_dir);
  if (spec.empty() && !lease) return ResolveQemuUser("", def);
  QemuUser u = ResolveQemuUser(spec, def);
  if (lease && u.uid == lease->uid) {
    u.groups = LeasedGroups(lease->gid, lease->file_groups);
    u.source = "leased";
    u.lease = true;
  }
  return u;
}

namespace {

// What the child of OpenErrorAs does, and where it leaves its answer (in memory it shares).
struct OpenAs {
  const QemuUser* user;
  const char* path;
  int flags;
  int err = EIO;  // stays when the child dies before it answers
};

// The child shares qlaunch's memory (CLONE_VM) and runs while qlaunch waits (CLONE_VFORK), with
// every signal blocked. Only raw syscalls: glibc's credential wrappers would change every thread
// of qlaunch; the errno they set lands in the waiting thread's, which is not looked at.
__attribute__((no_sanitize("address"))) int OpenAsChild(void* arg) {
  OpenAs* a = static_cast<OpenAs*>(arg);
  const QemuUser& u = *a->user;
  if (u.change && (::syscall(SYS_setgroups, u.groups.size(), u.groups.data()) != 0 ||
                   ::syscall(SYS_setresgid, u.gid, u.gid, u.gid) != 0 ||
                   ::syscall(SYS_setresuid, u.uid, u.uid, u.uid) != 0)) {
    a->err = errno ? errno : EPERM;
    ::syscall(SYS_exit_group, 0);
  }
  const long fd = ::syscall(SYS_openat, AT_FDCWD, a->path, a->flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  a->err = fd < 0 ? errno : 0;
  ::syscall(SYS_exit_group, 0);
  return 0;
}

}  // namespace

int OpenErrorAs(const QemuUser& user, const std::string& path, int flags) {
  OpenAs job{&user, path.c_str(), flags};
  // A switch of user makes the kernel mark the memory's owner not dumpable, and the memory is
  // ours: put back what it was once the child is gone.
  const int dumpable = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  alignas(64) char stack[16384];  // the child's, while this thread waits in clone
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::clone(OpenAsChild, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &job);
  const int clone_errno = errno;
  if (pid > 0) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (dumpable > 0 && ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != dumpable) ::prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid > 0 ? job.err : clone_errno;
}

}  // namespace qlaunch::launcher
