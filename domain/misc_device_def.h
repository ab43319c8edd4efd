// <memballoon>, <rng>, <watchdog> (parsed by domain/parse_misc_devices.cc).
#pragma once

#include <optional>
#include <string>

#include "domain/device_address.h"

namespace qlaunch::domain {

// Absent from the XML: libvirt's default on x86, a virtio balloon.
struct MemBalloon {
  std::string model;         // virtio | none
  std::optional<bool> autodeflate, free_page_reporting;  // autodeflate='on', freePageReporting='on'
  DeviceAddress address;
  int line = 0;
};

struct Rng {
  std::string model = "virtio";
  std::string backend_model;  // random | egd
  std::string source;         // random: /dev/urandom (default), /dev/random, /dev/hwrng
  std::string egd_type;       // egd: tcp | unix, a character device source
  std::string egd_mode;       // bind | connect (default)
  std::string egd_host, egd_service, egd_path;
  std::optional<unsigned> rate_bytes, rate_period;
  DeviceAddress address;
  int line = 0;
};

struct Watchdog {
  std::string model;          // i6300esb | ib700
  std::string action = "reset";  // reset | shutdown | poweroff | pause | none | dump | inject-nmi
  DeviceAddress address;
  int line = 0;
};

}  // namespace qlaunch::domain
