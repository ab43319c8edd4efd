// SaveDomain: `qlaunch save NAME FILE`, as `virsh save`: the guest's state and memory into FILE
// (save_file.h: qlaunch's header with the domain's live XML, then QEMU's migration stream), then the
// domain is gone as after destroy (QEMU quit; state, taps, labels, cgroup and hugepages released).
//
// QEMU runs under -sandbox spawn=deny, so it cannot `exec:` a writer: qlaunch opens FILE itself,
// writes the header, hands the fd to QEMU (`getfd`) and runs `migrate` "fd:qlaunch-save". The guest
// is paused first (`stop`), as virsh pauses it; whether it ran is in the header, so `restore`
// resumes a guest that ran and leaves a paused one paused. While it works the domain is in state
// migrating. On any failure (QEMU's, a full disk, SIGINT/SIGTERM) FILE is removed and a guest
// that ran runs on; the error says why. A signal cancels the save until FILE is complete and on
// disk (also one that came as QEMU finished its stream); only then is the domain destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

struct SaveOptions {
  std::string name;
  std::string file;
  bool progress = false;  // a progress line on stderr
  std::chrono::milliseconds qmp_timeout{5000};
};

struct SaveReport {
  std::string name, file;
  std::string state;          // "running" or "paused", before the save
  uint64_t file_bytes = 0;    // FILE's size
  uint64_t stream_bytes = 0;  // QEMU's part of it
  double save_ms = 0;         // `migrate` until QEMU's stream is complete and on disk (fsync)
  double wall_ms = 0;         // this command, from the session until the domain is released
};

// Throws NotRunningError / WrongStateError (domain_session.h), std::runtime_error naming FILE or QEMU's
// error (the domain stays as it was).
SaveReport SaveDomain(const StateDir& state, const SaveOptions& opts);

// {"name","file","state","file_bytes","stream_bytes","save_ms","wall_ms"}
nlohmann::json ToJson(const SaveReport& r);

}  // namespace qlaunch::launcher
