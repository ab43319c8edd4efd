// `qlaunch change-media`: eject, insert or change the medium of a running domain's cdrom, as
// `virsh change-media --live` does under libvirt 9.0: the QMP commands of
// qemu_cmd/media_change_plan.h, the new image given to QEMU's user first (and back when the
// change fails), the old image's owner given back after it, the change recorded in the state
// dir (launcher/lifecycle/change/media_record.h) so that dumpxml and domblklist show it.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

enum class MediaAction { kUpdate, kInsert, kEject };

struct ChangeMediaOptions {
  std::string name;
  std::string target;  // <target dev> of the drive, or its current source path
  std::string source;  // the new medium (a file or block device); "" with kEject
  MediaAction action = MediaAction::kUpdate;
  bool force = false;  // open the tray even when the guest locked it
  std::chrono::milliseconds qmp_timeout{30000};
  std::chrono::milliseconds tray_timeout{5000};  // libvirt's CHANGE_MEDIA_TIMEOUT
};

struct ChangeMediaResult {
  std::string target, device_id;
  std::string old_source, new_source;  // "" for none
  std::string old_node, new_node;      // node prefixes ("libvirt-4"); "" for none
  nlohmann::json commands = nlohmann::json::array();  // what was sent, in order
};

// Throws std::runtime_error (or NotRunningError, WrongStateError, DiagnosticError) with a clear
// message for an unknown domain or target, a drive that is not a cdrom, a missing or unreadable
// FILE, an eject of an empty drive, an insert into a full one, a tray the guest keeps locked,
// and anything QEMU refuses. On any error the guest's drive, its nodes and every file's owner are
// as they were before.
ChangeMediaResult ChangeMedia(const StateDir& state, const ChangeMediaOptions& opts);

}  // namespace qlaunch::launcher
