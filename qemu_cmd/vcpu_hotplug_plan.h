// setvcpus --live as libvirt 9.0 does it, pure: from QEMU's query-hotpluggable-cpus reply and the
// wanted count, the device_add of each vCPU to plug (driver = the entry's type, id "vcpu<index>",
// the entry's topology ids and node in libvirt's order) or the device_del of each to unplug, last
// first. A vCPU's index is its place in topology order (socket, die, cluster, core, thread), as
// in -smp; the vCPUs the domain booted with cannot be unplugged (they have no id to name).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "qemu_cmd/media_change_plan.h"

namespace qlaunch::qemu {

struct HotpluggableCpu {
  std::string type;               // e.g. "qemu64-x86_64-cpu"
  nlohmann::json props;           // socket-id, core-id, thread-id, node-id, die-id, ...
  std::string qom_path;           // "" while the slot is empty
  bool plugged() const { return !qom_path.empty(); }
};

// The reply's entries in topology order. Throws std::runtime_error for a reply it cannot read
// (not an array, an entry without type or props, more than one vCPU per entry).
std::vector<HotpluggableCpu> ParseHotpluggableCpus(const nlohmann::json& reply);

struct VcpuChange {
  std::vector<QmpCommand> add;         // device_add, in index order
  std::vector<std::string> remove;     // ids to device_del, highest index first
};

// `boot`: the vCPUs the domain started with (<vcpu current>, else all); `want`: the new count.
// Throws std::runtime_error with libvirt's words: want 0, want above the slots ("requested vcpus
// is greater than max allowable vcpus for the live domain: W > M"), unplugging a boot vCPU
// ("vcpu 'N' can't be hot-unplugged"), and a plugged vCPU above one that is not (a gap).
VcpuChange PlanSetVcpus(const std::vector<HotpluggableCpu>& cpus, unsigned boot, unsigned want);

// How many vCPUs are plugged now.
unsigned PluggedCount(const std::vector<HotpluggableCpu>& cpus);

}  // namespace qlaunch::qemu
