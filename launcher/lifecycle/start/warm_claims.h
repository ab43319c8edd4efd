// WarmClaims: the warm pool's files (launcher/host/warm_pool.h) one start takes for its launcher
// backends (PreallocBy::kLauncher: QEMU gets their memory by fd), in place of memfds it would
// create and fill. A backend takes the smallest warm file of its page size on its one host node
// that is as large as it (cut down to its size); a backend without a match is filled as before.
//
// Claimed under the hugepage pool lock, before the pre-flight, which then counts only what is
// still to be allocated (SubtractFromNeeds). Until Commit() (the claims recorded in the domain's
// state dir, "pool"), destruction puts the files back as warm: nobody but qlaunch opened them.
// After it, the domain's end makes them dirty (host/state_dir.cc, RemoveDomainDir), and when the
// pool has targets (warm_target.h) the claims' end starts the detached worker that refills them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launcher/host/qemu_user.h"
#include "launcher/host/warm_pool.h"
#include "numa/host_topology.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// The host node and page size a backend's memory would be taken from the pool with, or nullopt
// when the pool cannot hold it (not a launcher backend, ordinary pages, not bound to one node;
// unbound memory counts as on the node of a host that has one).
struct WarmShape {
  uint64_t page_bytes = 0;
  unsigned node = 0;
  uint64_t bytes = 0;
};
std::optional<WarmShape> ShapeOf(const qemu::MemoryBackend& b, const numa::HostTopology& host);

// The warm file for one backend (ShapeOf), in state use, given to `owner` (uid, gid; nullopt:
// left root's) with mode 0600; nullopt when none matches. For attach-device of a DIMM.
std::optional<HeldFile> ClaimWarmFile(const qemu::MemoryBackend& b, const numa::HostTopology& host,
                                      std::optional<std::pair<uid_t, gid_t>> owner);

class WarmClaims {
 public:
  WarmClaims() = default;
  // Takes a warm file for every launcher backend that has one; with none in the pool (or no pool
  // directory) takes nothing. Each file is given to QEMU's user (0600) for the fd QEMU reopens.
  static WarmClaims Take(const qemu::LaunchPlan& plan, const numa::HostTopology& host, const QemuUser& user);
  WarmClaims(WarmClaims&&) = default;
  WarmClaims& operator=(WarmClaims&&) = default;
  ~WarmClaims();

  bool empty() const { return files_.empty(); }
  // The file taken for backend `id`, or nullptr.
  HeldFile* Find(const std::string& id);
  // The pool needs of the plan, less the pages these files already hold.
  void SubtractFromNeeds(std::vector<qemu::LaunchPlan::PoolNeed>* needs) const;
  // The domain's "pool" record (WarmRecordLine per file).
  std::string Record() const;
  void Commit() { committed_ = true; }
  // Backend id -> "warm" for those taken here.
  std::map<std::string, std::string> Sources() const;

 private:
  std::map<std::string, HeldFile> files_;  // backend id -> its file (state use)
  std::map<std::string, uint64_t> page_bytes_;
  bool committed_ = false;
};

}  // namespace qlaunch::launcher
