// SwapQemu: `qlaunch migrate NAME --local [--qemu BINARY]`, a new QEMU (the same binary or a newer
// one) put under a running domain without copying its memory. qlaunch owns the guest's shared
// hugetlb memfds (the backends it filled, start_memory.h) and the warm pool files its backends took
// (host/warm_pool.h; they stay in use, the domain's): it opens the memfds again through the old
// QEMU's /proc/PID/fd (root) and the files by the paths the domain recorded, hands them to a new QEMU planned from the running definition as the
// destination of a migration (`-incoming defer`, the memfds at the planned fd numbers), and
// migrates with x-ignore-shared on both ends, so RAM in shared memory is not sent: the switch-over
// carries device state (and any private memory) only and does not grow with the shared memory.
//
// Then, under the state root's lock, the domain's pid, pid.start, qmp.sock and plan.json name the
// new QEMU, and the old one (postmigrate) is quit. The domain keeps its state dir, cgroup (the new
// QEMU joins it), labels, mem-path dirs and hugepages. Refused before anything is made for a
// shared backend that is not one of qlaunch's memfds or warm files (QEMU's own would be lost), for host-side
// devices qlaunch made (taps, sockets, VNC/SPICE ports, UEFI vars: the old QEMU holds them), and
// for a domain under `qlaunch run` (its supervisor watches the old QEMU). On any failure the new
// QEMU is killed and the old one runs on as before.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/move/migration_drive.h"

namespace qlaunch::launcher {

struct LocalSwapOptions {
  std::string name;
  std::string qemu;  // the new binary; "" = the one the domain runs now
  DriveOptions drive;
};

struct LocalSwapReport {
  std::string name, emulator;
  pid_t old_pid = 0, new_pid = 0;
  uint64_t handed_over_bytes = 0;  // shared memory the new QEMU got by fd, not by copy
  double ready_ms = 0;             // from the command's start until the new QEMU listened
  DriveResult drive;               // QEMU's figures (downtime: the switch-over)
  double wall_ms = 0;
};

LocalSwapReport SwapQemu(const StateDir& state, const LocalSwapOptions& o);

// {"name","local":true,"emulator","old_pid","new_pid","handed_over_bytes","ready_ms","total_time_ms",
//  "setup_time_ms","downtime_ms","ram_transferred_bytes","ram_total_bytes","wall_ms"}
nlohmann::json ToJson(const LocalSwapReport& r);

}  // namespace qlaunch::launcher
