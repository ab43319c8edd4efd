// The change journal's recovery (running_def.h: change.json, detaching.json): what a killed
// qlaunch left half done (an attach, a detach, a change-media) is finished or undone as QEMU now
// has it, and the detaches the guest has completed since detach-device stopped waiting are
// finished. Every verb that changes a running domain's devices calls RecoverChanges first; the
// steps below it are the ones attach-device and detach-device (hotplug.cc) share with it. Only
// the change room's verbs call them: no other room finishes or undoes a change.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/domain_def.h"
#include "launcher/host/state_dir.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

void RecoverChanges(const StateDir& state, const std::string& name, qemu::QmpClient& qmp,
                    std::chrono::milliseconds timeout);

// One command of the journal ({"execute", "arguments"}), its error ignored (an undo, a release).
void RunQuietly(qemu::QmpClient& qmp, const nlohmann::json& call, std::chrono::milliseconds timeout);

// Does QEMU still have the device `id` (qom-list of /machine/peripheral)?
bool DeviceExists(qemu::QmpClient& qmp, const std::string& id, std::chrono::milliseconds timeout);

// Gives `files` their owners back, but those the domain `still_running` still opens.
void GiveBack(const StateDir& state, const std::filesystem::path& dir, const std::vector<std::string>& files,
              const domain::DomainDef& still_running);

// Removes a device QEMU no longer has from the state dir, by its detach record `change`: its
// backends (already gone with it for most), its record and element, its image's owner, its socket.
void FinishDetach(const StateDir& state, const std::filesystem::path& dir, qemu::QmpClient& qmp,
                  const nlohmann::json& change, std::chrono::milliseconds timeout);

}  // namespace qlaunch::launcher
