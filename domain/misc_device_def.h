// <memballoon>, <rng>, <watchdog> (parsed by domain/parse_misc_devices.cc).
#pragma once

#include <optional>
#include <string>

#include "domain/device_address.h"

namespace qlaunch::domain {

struct MemBalloon {
  std::string model;         // virtio | none
  std::optional<unsigned> stats_period;
  DeviceAddress address;
  int line = 0;
};

struct Rng {
  std::string model = "virtio";
  std::string backend_model;  // random | egd
  std::string source;         // random: /dev/urandom (default), /dev/random, /dev/hwrng
  std::string egd_type, egd_host, egd_service, egd_path;  // egd: a tcp or unix char source
  std::optional<unsigned> rate_bytes, rate_period;
  DeviceAddress address;
  int line = 0;
};

struct Watchdog {
  std::string model;          // i6300esb | itco
  std::string action = "reset";  // reset | shutdown | poweroff | pause | none | dump | inject-nmi
  DeviceAddress address;
  int line = 0;
};

}  // namespace qlaunch::domain
