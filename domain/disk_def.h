// <disk>: the model of one disk or cdrom (parsed by domain/parse_disk.cc).
#pragma once

#include <optional>
#include <string>

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
  bool readonly = false;
  bool shareable = false;
  std::string serial;
  std::optional<unsigned> boot_order;
  DeviceAddress address;
  int line = 0;
};

}  // namespace qlaunch::domain
