// The warm pool (issue 38): hugetlbfs files whose pages are faulted in (so zero), placed on their
// node and held by no process, ready for a start to take instead of allocating and filling.
//
// One directory per hugetlbfs mount (page size): <mount>/<name>, name "qlaunch-pool" or
// $QLAUNCH_POOL_DIR (tests use their own), root's, mode 0700. QEMU never opens a path there: a
// start opens the file and QEMU inherits the fd, as it does the memfds.
//
// A file's state is its name, "<state>.n<node>.<bytes>.<serial>", and every change of state is
// one rename(2) made under an flock on the directory, so two processes never take one file:
//   fill   being filled by `pool fill`, which holds an flock on the file
//   warm   every page faulted in (zero) or scrubbed completely: the clean mark. Only a warm file
//          is ever handed out.
//   use    taken by a start; the domain's state dir lists it ("pool")
//   dirty  its domain ended (the state dir went): a guest's bytes may be in it
//   scrub  being zeroed by a scrubber, which holds an flock on the file
// A fill or scrub file whose flock nobody holds was left by a killed worker: a fill is given
// back (unlinked), a scrub is dirty again (RecoverStale). A use file that no process has open or
// mapped (a write lease on it is granted) was left by a claimer killed before it recorded the file
// in its domain's state dir, or by a QEMU that ended: it is dirty (RecoverStale), never in use for
// good. A claimer holds its fd from the claim until QEMU has the file, so a live claim is never
// taken for an orphan. A dirty file is scrubbed only when no process has it open or mapped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"
#include "numa/host_topology.h"

namespace qlaunch::launcher {

inline constexpr const char* kPoolDirEnv = "QLAUNCH_POOL_DIR";
// Testing aid: clean-early (the scrubber sets the clean mark, then stops before zeroing),
// scrub-stall (the scrubber stops for good halfway through its first file, to be killed),
// trust-stale (a scrub file a killed scrubber left is taken as warm), fill-stall (a fill waits
// for a signal after its first set, to be interrupted there), claim-stall (a start or a DIMM
// attach stops for good right after it claims a warm file, before recording it, to be killed). The first three break a promise of
// the pool on purpose, so that a test can show it would see that.
inline constexpr const char* kPoolFaultEnv = "QLAUNCH_POOL_FAULT";
bool PoolFault(std::string_view what);

enum class WarmState { kFill, kWarm, kUse, kDirty, kScrub };
const char* ToString(WarmState s);

struct WarmName {
  WarmState state = WarmState::kWarm;
  unsigned node = 0;
  uint64_t bytes = 0;
  std::string serial;  // [A-Za-z0-9-]+, unique in its directory
};
std::string FormatWarmName(const WarmName& n);
std::optional<WarmName> ParseWarmName(std::string_view file_name);

struct WarmEntry {
  std::filesystem::path path;
  WarmName name;
};

// The directory's name under each mount ($QLAUNCH_POOL_DIR: a single path component).
std::string PoolDirName();
// Page size -> its pool directory, for every hugetlbfs mount of the host (made or not).
std::map<uint64_t, std::filesystem::path> PoolDirs(const numa::HostTopology& host);

// An open file of the pool and its name; for fill and scrub, the fd holds the file's flock.
struct HeldFile {
  UniqueFd fd;
  std::filesystem::path path;
  WarmName name;
};

class PoolDir {
 public:
  explicit PoolDir(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& path() const { return dir_; }
  bool Exists() const;
  void Create() const;  // root's, 0700; its mount must exist

  // The files of the pool, by name (other names are ignored).
  std::vector<WarmEntry> List() const;
  // What killed workers left: unlocked fill files unlinked, unlocked scrub files dirty again, use
  // files nobody has open or mapped dirty (and a scrubber started for them). Returns how many
  // files it changed.
  unsigned RecoverStale() const;

  // A new file in state fill of `bytes` (ftruncated), locked; throws naming the file.
  HeldFile CreateFill(unsigned node, uint64_t bytes) const;
  // fill|scrub -> warm: the clean mark. Call only once every page is faulted in or zeroed.
  void MarkWarm(HeldFile* f) const;
  // Unlinks a file being filled (a fill that failed or was interrupted): its pages go back.
  void GiveBack(HeldFile* f) const;

  // The smallest warm file on `node` of at least `bytes`, now in state use (cut down to `bytes`,
  // the rest of its pages given back); nullopt when none matches.
  std::optional<HeldFile> Claim(unsigned node, uint64_t bytes) const;
  // A dirty file no process holds, now in state scrub and locked; nullopt when none.
  std::optional<HeldFile> TakeDirty() const;
  // Unlinks every warm and dirty file (and what stale workers left); files in use or being worked
  // on stay. Returns the files unlinked.
  std::vector<WarmEntry> Drain() const;

 private:
  UniqueFd Lock() const;
  std::filesystem::path dir_;
};

// A domain's records of the pool files it holds: its start's "pool" and one "pool.<backend id>"
// per DIMM attached since, in its state dir; a line per file, "<path>\t<backend id>\n".
std::string WarmRecordLine(const std::filesystem::path& file, const std::string& backend_id);
// Backend id -> pool file, from every record in `domain_dir` (migrate --local hands them over).
std::map<std::string, std::filesystem::path> DomainWarmFiles(const std::filesystem::path& domain_dir);

// use -> dirty for the pool files listed in `list_file` (one of a domain's records), then a
// detached scrubber (StartScrubber) when any became dirty. For the end of a domain.
void ReleaseDomainWarmFiles(const std::filesystem::path& list_file);

// Starts `qlaunch pool scrub` detached (its own session, SCHED_IDLE, nice 19, stdio on
// /dev/null) on the pool directory of that name ("": $QLAUNCH_POOL_DIR's), from this process's
// own binary; nothing when that binary is a test binary.
void StartScrubber(const std::string& pool_dir_name = "");

}  // namespace qlaunch::launcher
