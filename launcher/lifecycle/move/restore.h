// RestoreDomain: `qlaunch restore FILE`, as `virsh restore`: the domain `qlaunch save` put into FILE
// (save_file.h) runs again, with the same name, devices and memory, as it was saved.
//
// The header is read and checked first (a file that is not a save file, or is cut short, is refused
// before anything is created). Then the domain starts from the XML in it as the destination of a
// migration (StartOptions::incoming_fd): planned, checked and its memory filled as for a start, QEMU
// spawned with `-incoming defer`, handed FILE's fd (at the stream's offset) with `getfd`, and
// migrate-incoming "fd:qlaunch-restore". Once QEMU's status is no longer inmigrate, a guest that ran
// when it was saved is resumed (the stream itself says paused: save paused it first); a paused one
// stays paused. If QEMU cannot load the stream (it exits), or on SIGINT/SIGTERM, everything the
// start made is released: no QEMU, no state dir, every hugepage back.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/lifecycle/start/timings.h"

namespace qlaunch::launcher {

struct RestoreOptions {
  std::string file;
  bool progress = false;                 // the start's preallocation progress line on stderr
  std::filesystem::path state_root;      // "" = DefaultStateRoot()
  std::chrono::milliseconds qmp_timeout{0};  // 0 = QmpTimeoutFromEnv()
  std::chrono::milliseconds load_timeout{std::chrono::minutes(10)};  // for QEMU to load the stream
};

struct RestoreReport {
  StartReport start;     // the start as a destination (its timings: parse ... prealloc = the fill)
  std::string file;
  std::string state;     // "running" or "paused", afterwards
  double start_ms = 0;   // StartDomain, until QEMU was given the stream
  double fill_ms = 0;    // of which preallocating the guest's memory (timings' prealloc phase)
  double load_ms = 0;    // QEMU loading the stream, until it is no longer inmigrate
  double wall_ms = 0;    // this command from reading the header until the guest is as it was saved
};

// Throws std::runtime_error naming FILE (not a save file, truncated, QEMU could not load it, with
// the tail of its log), and what StartDomain throws.
RestoreReport RestoreDomain(const RestoreOptions& opts);

// {"name","pid","file","state","start_ms","fill_ms","load_ms","wall_ms","timings_ms":{...}}
nlohmann::json ToJson(const RestoreReport& r);

}  // namespace qlaunch::launcher
