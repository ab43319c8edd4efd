// LockExclusive: an exclusive flock(2) on a directory or a lock file, held as long as the returned
// fd lives (closing the only descriptor drops it). The one way the launcher's host-wide registries
// (state root, defined domains, uid leases, warm pool) serialize their read-modify-write; it waits
// through signals and throws, naming the path, rather than ever going on unlocked.
#pragma once

#include <filesystem>

#include "common/unique_fd.h"

namespace qlaunch {

enum class LockOn {
  kDirectory,  // the directory itself, which must exist
  kFile,       // a lock file, created 0600 if missing
};

// Blocks until the lock is held. `what` names the thing in errors ("the state directory").
UniqueFd LockExclusive(const std::filesystem::path& path, LockOn on, const char* what);

}  // namespace qlaunch
