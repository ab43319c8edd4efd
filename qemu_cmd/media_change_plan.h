// `qlaunch change-media`: the QMP commands that eject, insert or change the medium of a cdrom,
// the ones libvirt 9.0 sends with -blockdev (qemuDomainChangeMediaBlockdev): blockdev-add the new
// medium's storage and format nodes (the nodes libvirt adds: qemu_cmd/disk_plan.h
// DiskBlockdevs), open the tray (unless it is open), remove the medium, blockdev-del the old
// medium's format and storage nodes, insert the new format node, close the tray. One difference
// of order: libvirt adds the new nodes after removing the old medium, qlaunch before opening the
// tray, so a new medium QEMU cannot open (a qcow2 drive given a file that is not one) fails with
// the guest's drive untouched. Pure (no I/O): the caller sends add_nodes, open_tray, waits for
// the tray when asked, sends commands, and sends rollback when anything after the first
// blockdev-add fails.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/domain_def.h"

namespace qlaunch::qemu {

struct QmpCommand {
  std::string execute;
  nlohmann::ordered_json arguments;  // an object
  bool operator==(const QmpCommand&) const = default;
};

// What the drive looks like now, as QEMU says (query-block) and the state dir records.
struct MediaNow {
  std::string device_id;                // the frontend's qdev id (libvirt's alias): "sata0-0-0", "ide0-1-0"
  std::optional<std::string> old_node;  // the inserted medium's node prefix ("libvirt-2"); none: empty
  bool tray_open = false;
};

struct MediaChangePlan {
  std::vector<QmpCommand> add_nodes;    // the new medium's blockdev-adds (none to eject)
  std::optional<QmpCommand> open_tray;  // none when the tray is open already
  bool wait_for_tray = false;           // open_tray without force: wait until QEMU says it opened
  std::vector<QmpCommand> commands;     // after the tray is open, in order
  std::vector<QmpCommand> rollback;     // blockdev-del of the new nodes, when a later command fails
};

// `disk` is the drive with its new medium (disk.source; "" to eject), `new_node` the node prefix
// for it ("libvirt-N": libvirt numbers each new storage source with the domain's next index).
// Throws std::invalid_argument for a disk that is not a cdrom, for ejecting an empty drive, and
// for a new medium without a new_node.
MediaChangePlan PlanMediaChange(const domain::Disk& disk, const MediaNow& now, const std::string& new_node,
                                bool force);

// The commands as JSON lines ({"execute", "arguments"}), for --json and for messages.
nlohmann::ordered_json ToJson(const std::vector<QmpCommand>& commands);

}  // namespace qlaunch::qemu
