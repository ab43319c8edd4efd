// The disk family: each <disk> as libvirt 9.0 renders it, a storage and a format -blockdev
// (JSON) and the -device on its bus (qemu_cmd/disk_plan.cc). PlanDiskDevices is declared in
// qemu_cmd/device_plan.h.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "domain/domain_def.h"

namespace qlaunch::qemu {

// Where an ide, sata or scsi disk sits: <address type='drive'> when the XML has one, else
// what libvirt's virDomainDiskDefAssignAddress derives from the target name (ide: controller
// idx/4, bus idx%4/2, unit idx%2; sata: controller idx/6, unit idx%6; scsi: controller idx/7,
// unit idx%7). std::nullopt for virtio disks. The controllers this names (scsiN, sataN, the
// built-in IDE) are the controller family's to add.
struct DriveAddress {
  unsigned controller = 0, bus = 0, target = 0, unit = 0;
  bool operator==(const DriveAddress&) const = default;
};
std::optional<DriveAddress> DiskDriveAddress(const domain::Disk& disk);

// libvirt's node-name prefix of the disk at `index` in devices.disks: "libvirt-N", numbered
// from the last disk (1) up, every disk counting (an empty cdrom too).
std::string DiskNodeName(const domain::DomainDef& def, size_t index);

// The two -blockdev nodes of a disk with a source, as libvirt 9.0 gives them (at start, and to
// blockdev-add when it hot-plugs a disk or changes a cdrom's medium): the storage node
// "<node>-storage" ("file" or "host_device") and the format node "<node>-format" on top of it.
struct DiskBlockdevNodes {
  nlohmann::ordered_json storage, format;
};
DiskBlockdevNodes DiskBlockdevs(const domain::Disk& disk, const std::string& node);

}  // namespace qlaunch::qemu
