// update-memory-device --requested-size: a running domain's virtio-mem device asked to plug or
// unplug memory, as `virsh update-memory-device --live` does under libvirt 9.0 (qom-set of the
// device's requested-size; the guest's driver then plugs or unplugs blocks on its own), planned
// by qemu_cmd/virtio_mem_resize_plan. Growth on huge pages is checked against the pools first,
// as a start is: the guest's plug would otherwise fail inside the guest. The running
// definition's <requested> follows what QEMU reports, after the change and before it (a
// qlaunch killed mid-change left it behind).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"
#include "qemu_cmd/virtio_mem_resize_plan.h"

namespace qlaunch::launcher {

struct UpdateMemoryOptions {
  std::string name;
  qemu::VirtioMemSelector which;
  uint64_t requested_bytes = 0;
  std::chrono::milliseconds qmp_timeout{10000};
};

struct UpdateMemoryResult {
  std::string alias;
  uint64_t size_bytes = 0, block_bytes = 0, old_requested = 0, new_requested = 0;
  uint64_t plugged_bytes = 0;  // what the guest has plugged when the command returns
  nlohmann::json qmp;          // the command sent
};

// Throws NotRunningError/WrongStateError as the state table says; std::runtime_error for what
// PlanVirtioMemResize refuses, a hugepage shortfall (nothing sent), or QEMU's refusal.
UpdateMemoryResult UpdateMemoryDevice(const StateDir& state, const UpdateMemoryOptions& opts);

// What QEMU reports of each virtio-mem device (query-memory-devices): alias -> (requested,
// plugged) bytes.
struct VirtioMemStatus {
  uint64_t requested = 0, plugged = 0, max = 0;
};
std::map<std::string, VirtioMemStatus> ReadVirtioMem(const nlohmann::json& query_memory_devices);

// The same, asked of the QEMU behind `qmp_socket` on a connection of its own; empty when it does
// not answer.
std::map<std::string, VirtioMemStatus> VirtioMemNow(const std::string& qmp_socket, std::chrono::milliseconds timeout);

}  // namespace qlaunch::launcher
