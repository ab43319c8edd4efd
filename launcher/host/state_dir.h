// State of running domains: one directory per domain under the state root
// ($QLAUNCH_STATE_DIR, default /run/qlaunch):
//
//   <root>/<name>/pid          QEMU's pid (written once QEMU is spawned)
//   <root>/<name>/pid.start    QEMU's start time (/proc/<pid>/stat field 22), against pid reuse
//   <root>/<name>/owner        "<pid> <start time>" of the `qlaunch start` still starting it;
//                              removed when the start succeeds
//   <root>/<name>/incoming     the URI a destination of a migration listens on, until the guest
//                              is in; migrating: "<pid> <start time>" of a `migrate` moving it away
//   <root>/<name>/qmp.sock     QMP socket, qemu.log, domain.xml, plan.json, cleanup (paths
//                              outside the dir to remove with it, one a line)
//
// Locking: every change of which domain directories exist (claiming one, removing a stale or
// destroyed one) happens under an exclusive flock on the root directory itself, held for a
// few syscalls only. Claiming is "lock root; if <name>/ exists and its QEMU or its starter is
// alive, refuse; otherwise clean the stale dir; mkdir <name>/ with an owner file; unlock", so
// of two concurrent `start`s of one name exactly one wins.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace qlaunch::launcher {

// $QLAUNCH_STATE_DIR when set and non-empty, else /run/qlaunch.
std::filesystem::path DefaultStateRoot();

// A process as recorded in a state file: pid plus its kernel start time (0 = unknown).
struct ProcessRef {
  pid_t pid = 0;
  uint64_t start_time = 0;
};

// Field 22 of /proc/<pid>/stat; nullopt when the process does not exist.
std::optional<uint64_t> ProcessStartTime(pid_t pid);
// The process exists, is not a zombie (unless other threads of it are still exiting: until
// the last one is gone it still holds memory and fds), and (when ref.start_time != 0) is the
// same process.
bool ProcessAlive(const ProcessRef& ref);
// ProcessRef of a live pid (start time filled in); {pid, 0} when it cannot be read.
ProcessRef RefOf(pid_t pid);

// Thrown when the name is taken by a domain that is running or being started.
class AlreadyRunningError : public std::runtime_error {
 public:
  AlreadyRunningError(const std::string& name, pid_t pid, bool starting);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

// Names that are safe as one path component: non-empty, no '/', no leading '.', no NUL,
// at most 200 bytes. Throws std::invalid_argument otherwise.
void CheckDomainName(const std::string& name);

// What a domain directory says about its domain.
struct DomainStatus {
  enum class Kind { kRunning, kStarting, kStale };
  Kind kind = Kind::kStale;
  std::optional<ProcessRef> qemu;   // from pid/pid.start, when present
  std::optional<ProcessRef> owner;  // from owner, when present
  bool qemu_alive = false;
  bool owner_alive = false;
  bool incoming = false;   // an "incoming" file: the destination of a migration not yet in
  bool migrating = false;  // a "migrating" file naming a live `qlaunch migrate` of it
};

class StateDir {
 public:
  explicit StateDir(std::filesystem::path root = DefaultStateRoot());
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path DomainDir(const std::string& name) const { return root_ / name; }

  // Runs fn while holding the exclusive flock on the root (created 0755 if missing).
  void WithLock(const std::function<void()>& fn) const;

  // Names of the domain directories (no hidden entries, no files), sorted.
  std::vector<std::string> Names() const;

  DomainStatus Inspect(const std::string& name) const;

  // Removes a domain directory whose domain is not alive: kills (SIGKILL) and waits for a QEMU
  // left behind by a start that died, removes the paths listed in its cleanup file, then the
  // directory. Call under WithLock. Returns false (and removes nothing) when it is alive.
  bool RemoveIfStale(const std::string& name) const;

  // Takes the lock and removes the directory (and its cleanup paths) if its pid file still names
  // `qemu` (for destroy: a newer domain of the same name is never removed).
  void RemoveIfPid(const std::string& name, const ProcessRef& qemu) const;

 private:
  std::filesystem::path root_;
};

// The claim of one domain directory by `qlaunch start`. Until Commit(), destruction removes the
// directory (and the paths recorded with AddCleanupPath) under the root lock.
class StateClaim {
 public:
  // Throws AlreadyRunningError when the name is taken, std::invalid_argument for a bad name,
  // std::runtime_error (with the path) when the directory cannot be created.
  static StateClaim Acquire(const StateDir& root, const std::string& name);

  StateClaim(StateClaim&& other) noexcept;
  StateClaim& operator=(StateClaim&&) = delete;
  ~StateClaim();

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path File(const std::string& file) const { return dir_ / file; }

  // Atomically (write + rename) writes <dir>/<file>.
  void WriteFile(const std::string& file, const std::string& contents) const;
  void RecordQemu(const ProcessRef& qemu) const;  // pid + pid.start
  // A path outside the directory to remove with it (a hugetlbfs mem-path dir); recorded in the
  // cleanup file so destroy and stale cleanup remove it too.
  void AddCleanupPath(const std::filesystem::path& path);

  // The start succeeded: drop the owner file, keep everything else.
  void Commit();
  // Removes everything now (idempotent).
  void Release();

 private:
  StateClaim(StateDir root, std::string name);
  StateDir root_;
  std::string name_;
  std::filesystem::path dir_;
  std::vector<std::filesystem::path> cleanup_;
  bool active_ = false;
};

// A whole (small) file; nullopt when it cannot be opened.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path);
// Writes `contents` to a temporary file beside `path`, then renames it over `path`.
void AtomicWrite(const std::filesystem::path& path, const std::string& contents);

// Helpers shared by list and destroy.
std::optional<ProcessRef> ReadProcessRef(const std::filesystem::path& pid_file,
                                         const std::filesystem::path& start_file);
// Gives back the files in <dir>/labels.json (launcher/host/file_labels.h), removes each path in
// <dir>/cleanup (missing ones are fine) and the cgroup in <dir>/cgroup, then <dir> itself.
void RemoveDomainDir(const std::filesystem::path& dir);

}  // namespace qlaunch::launcher
