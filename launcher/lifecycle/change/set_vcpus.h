// setvcpus --live: plugs or unplugs a running domain's vCPUs as libvirt 9.0 does (QMP device_add
// of the CPU type query-hotpluggable-cpus reports, placed by its topology ids and guest cell;
// device_del of the last ones, waiting for the guest to let go), planned by
// qemu_cmd/vcpu_hotplug_plan. The running definition's <vcpu current> follows what QEMU reports
// after every change, and before one too (a qlaunch killed mid-change left it behind).
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

struct SetVcpusOptions {
  std::string name;
  unsigned count = 0;
  std::chrono::milliseconds qmp_timeout{10000};
  std::chrono::milliseconds unplug_wait{30000};  // per vCPU, for the guest to release it
};

struct SetVcpusResult {
  unsigned before = 0, after = 0, max = 0;
  nlohmann::json qmp = nlohmann::json::array();  // the commands sent
};

// Throws NotRunningError/WrongStateError as the state table says, std::runtime_error with
// libvirt's words for a count it refuses (nothing sent), QEMU's refusal of a device_add (the
// vCPUs plugged before it are unplugged again), and a guest that does not release a vCPU in
// time ("vcpu unplug request timed out"); the record then says what QEMU runs.
SetVcpusResult SetVcpus(const StateDir& state, const SetVcpusOptions& opts);

}  // namespace qlaunch::launcher
