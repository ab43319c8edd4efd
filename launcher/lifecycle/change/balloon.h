// A running domain's memory balloon: `setmem` sets its target as `virsh setmem --live` does under
// libvirt 9.0 (QMP `balloon`, the same refusals), and `dominfo` reads what the guest holds now
// (QMP `query-balloon`'s actual, libvirt's "Used memory").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

struct SetMemoryResult {
  uint64_t target_bytes = 0;  // what the balloon was asked to leave the guest
  uint64_t max_bytes = 0;     // the domain's <memory>: the most setmem may give
  std::string balloon;        // the balloon device's id (libvirt's alias, "balloon0")
  nlohmann::json qmp;         // the command sent
};

// Throws NotRunningError/WrongStateError as the state table says, std::runtime_error with
// libvirt's wording for a target above <memory> ("cannot set memory higher than max memory"),
// a domain without a balloon (<memballoon model='none'>) or one QEMU has not activated, and a
// zero target. Nothing is sent to QEMU when a check fails.
SetMemoryResult SetMemory(const StateDir& state, const std::string& name, uint64_t target_bytes,
                          std::chrono::milliseconds timeout);

// query-balloon's "actual" in bytes; nullopt when the domain has no active balloon or QEMU does
// not answer.
std::optional<uint64_t> BalloonActual(const std::string& qmp_socket, std::chrono::milliseconds timeout);

}  // namespace qlaunch::launcher
