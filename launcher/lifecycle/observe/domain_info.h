// What `qlaunch dominfo` shows of a running domain, as JSON: from its state dir (domain.xml,
// plan.json, user, devices.json), QMP's query-status, and where its memory sits per host node
// (QEMU's numa_maps, numa_maps.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

// Asks the state table for dominfo (RunningQemu): NotRunningError, WrongStateError.
nlohmann::json DomainInfo(const StateDir& state, const std::string& name);

}  // namespace qlaunch::launcher
