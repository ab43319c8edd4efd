// <disk>: the model of one disk or cdrom (parsed by domain/parse_disk.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/device_address.h"

namespace qlaunch::domain {

struct Disk {
  std::string type = "file";    // file | block
  std::string device = "disk";  // disk | cdrom
  std::string driver_type = "raw";  // raw | qcow2
  std::string cache;            // "" | none | writethrough | writeback | directsync | unsafe
  std::string io;               // "" | native | threads | io_uring
  std::string discard;          // "" | unmap | ignore
  std::string source;           // file= or dev=; empty: an empty cdrom
  std::string target_dev;       // vda, sda, hdc, ...
  std::string target_bus;       // virtio | ide | sata | scsi
  bool readonly = false;        // <readonly/> (a cdrom is read-only anyway)
  bool shareable = false;       // <shareable/>
  std::string serial;           // <serial>
  std::optional<unsigned> boot_order;
  DeviceAddress address;        // type "" | drive | pci, as the XML gives it
  int line = 0;
};

// The index a target name stands for, as libvirt's virDiskNameToIndex: "hda" -> 0, "vdb" -> 1,
// "sdaa" -> 26 (prefixes fd hd vd sd xvd ubd); -1 for anything else, partitions ("vda1") included.
int DiskNameToIndex(std::string_view name);

// Adds a disk where libvirt (virDomainDiskInsert) puts it: after the last disk on the same bus,
// or before the first disk on that bus with a higher index; at the end when its bus is new.
// libvirt keeps <disk>s in this order, which is their argv order and the "first disk" of boot.
void InsertDisk(std::vector<Disk>* disks, Disk disk);

}  // namespace qlaunch::domain
