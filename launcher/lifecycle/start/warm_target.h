// Warm targets (issue 38): how many warm sets shaped like a domain the pool keeps. One JSON file a
// domain, <targets root>/<pool directory name>/<domain>.json, root's: the domain's XML as it was
// given, the count, and the QEMU and --prealloc it is planned with. Written by `qlaunch pool
// target`, read by the detached worker (`qlaunch pool scrub`), which after its scrub fills each
// target up to its count; a start that took warm files starts that worker (WarmClaims). The files
// live under /etc (they survive a reboot, the pool does not): `pool scrub` at boot refills them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "launcher/host/warm_pool.h"
#include "launcher/lifecycle/start/warm_fill.h"
#include "numa/host_topology.h"

namespace qlaunch::launcher {

inline constexpr const char* kPoolTargetsEnv = "QLAUNCH_POOL_TARGETS";  // default /etc/qlaunch/pool-targets

struct WarmTarget {
  std::string domain;  // its name
  unsigned count = 0;
  std::string qemu;    // "" : the domain's <emulator> or the default
  std::string prealloc = "auto";
  std::string xml;     // the domain's XML text
};

// <$QLAUNCH_POOL_TARGETS or /etc/qlaunch/pool-targets>/<PoolDirName()>.
std::filesystem::path PoolTargetsDir();
// Every target of this pool, by domain name (files that do not parse are skipped).
std::vector<WarmTarget> LoadWarmTargets();
bool AnyWarmTarget();
// Writes it whole or not at all (count 0: removes it).
void SaveWarmTarget(const WarmTarget& t);

// (page size, node, bytes) of a pool file.
using WarmKey = std::tuple<uint64_t, unsigned, uint64_t>;
// The pool's files that are or will be warm (warm, dirty, being scrubbed or filled), by shape.
std::map<WarmKey, unsigned> CountPoolFiles(const numa::HostTopology& host);
// How many whole sets of `set` those files make.
unsigned SetsIn(const std::vector<ShapedBackend>& set, const std::map<WarmKey, unsigned>& files);

// The shapes of one set of the target's domain, planned as `pool fill` plans it.
std::vector<ShapedBackend> TargetShapes(const WarmTarget& t, const numa::HostTopology& host);

struct RefillResult {
  unsigned sets = 0;
  uint64_t bytes = 0;
  std::vector<std::string> errors;  // "DOMAIN: why" for a target that could not be filled
};
// Fills every target up to its count (FillPool), one after the other; a target that fails (a
// short pool) is named in `errors` and the others go on.
RefillResult RefillWarmTargets(const numa::HostTopology& host, const std::atomic<bool>* stop = nullptr);

}  // namespace qlaunch::launcher
