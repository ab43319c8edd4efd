// Spawning QEMU for `qlaunch start` (clone3 and exec: launcher/host/spawn_child.h), and what we do
// to it from outside.
//
// The child: stdin from /dev/null, stdout+stderr appended to the log file, its own session
// (setsid: a Ctrl-C on qlaunch's terminal never reaches it, and it outlives qlaunch unless
// die_with_parent), default signal mask (or SIGTERM/SIGINT/SIGHUP blocked: block_stop_signals),
// optionally a narrowed CPU affinity, and exactly the fds it needs: every fd above 2 is marked
// close-on-exec except the launcher memfds, which the parent placed on their planned numbers
// beforehand (FdReservation) so nothing can collide with them.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/id_set.h"
#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

struct MountNamespacePlan;  // qemu_mounts.h

// The lowest fd number n >= from such that n .. n+count-1 are all unused in this process.
int FreeFdBlock(int from, int count);

// Holds fd numbers [first, first+count) for memfds QEMU will inherit: reserved at once with
// /dev/null placeholders (close-on-exec), replaced by the real fds with Place(). Closes them
// all on destruction.
class FdReservation {
 public:
  FdReservation() = default;
  // Throws std::runtime_error when one of the numbers is already in use.
  FdReservation(int first, int count);
  FdReservation(FdReservation&& o) noexcept;
  FdReservation& operator=(FdReservation&& o) noexcept;
  ~FdReservation();

  // Makes fd number `target` (inside the block) refer to the same file as `fd`.
  void Place(int target, int fd);
  const std::vector<int>& fds() const { return fds_; }
  void Close();

 private:
  std::vector<int> fds_;
};

// The unprivileged user the child becomes before exec: supplementary groups, gid, uid (real,
// effective and saved), every capability set emptied (bounding set dropped first, while still
// root), ambient capabilities cleared. A step that fails ends the child with status 126 and the
// reason in the log: QEMU never runs with more than it was meant to.
struct DropTo {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

struct SpawnSpec {
  std::vector<std::string> argv;    // argv[0]: the binary
  std::filesystem::path log_file;   // created 0600 / appended
  std::vector<int> inherit_fds;     // fds (already at their numbers) QEMU inherits
  IdSet affinity;                   // CPUs to restrict QEMU to before exec; empty: inherit ours
  std::optional<DropTo> drop;       // switch to this user; nullopt: keep ours (asked for, or not root)
  uint64_t memlock_bytes = 0;       // RLIMIT_MEMLOCK raised to this before the drop (<locked/>); 0: as is
  int cgroup_fd = -1;               // >= 0: a cgroup v2 directory (O_RDONLY): the child is born in it
  // The kernel kills the child (SIGKILL) when the thread that spawned it dies, however it dies
  // (`qlaunch run` SIGKILLed, OOM-killed): PR_SET_PDEATHSIG, set after the privilege drop (a uid
  // change clears it) and checked against the parent having died already (getppid()). Only for
  // a supervisor that stays with QEMU: Spawn() must then be called on a thread that lives as
  // long as QEMU should (`run` spawns from its main thread).
  bool die_with_parent = false;
  // SIGTERM, SIGINT and SIGHUP stay blocked in QEMU (the mask survives exec; QEMU never unblocks
  // them), so a signal sent to every process of a tree (Slurm's proctrack/linuxproc, a process
  // group) reaches the supervisor alone, which shuts the guest down over QMP. QEMU still ends by
  // QMP quit or SIGKILL.
  bool block_stop_signals = false;
  // A mount namespace of its own (qemu_mounts.h), entered before the privilege drop; null: ours.
  const MountNamespacePlan* mounts = nullptr;
  // Always: RLIMIT_NOFILE's soft limit raised to its hard limit, PR_SET_NO_NEW_PRIVS.
};

// A spawned QEMU. Killed (SIGKILL) and reaped on destruction unless Detach()ed.
class QemuProcess {
 public:
  // Throws std::runtime_error naming the binary when it cannot be spawned.
  static std::unique_ptr<QemuProcess> Spawn(const SpawnSpec& spec);
  ~QemuProcess();

  pid_t pid() const { return pid_; }
  const ProcessRef& ref() const { return ref_; }

  // Non-blocking. Once it has exited: "exited with status N" / "was killed by signal N (NAME)".
  std::optional<std::string> ExitDescription();
  // SIGKILL and reap (idempotent; also fine after it exited). Async-signal-unsafe; thread-safe
  // with SendKill().
  void Kill();
  // Only kill(pid, SIGKILL) if not reaped yet: for the interrupt watcher thread.
  void SendKill();
  // Leave it running: qlaunch exits, QEMU stays.
  void Detach();

 private:
  struct Impl;
  explicit QemuProcess(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  pid_t pid_ = 0;
  ProcessRef ref_;
};

// The last `max_lines` lines of a log file (at most max_bytes from its end); "" when absent.
std::string LogTail(const std::filesystem::path& log, size_t max_lines = 15, size_t max_bytes = 4096);

// sched_setaffinity on every thread of `pid` (each entry of /proc/<pid>/task). Returns how many
// threads were changed; throws std::runtime_error when none could be.
size_t SetProcessAffinity(pid_t pid, const IdSet& cpus);

}  // namespace qlaunch::launcher
