// Until every family plans PlannedDevices: options rendered the old way, carried as one
// device's host_args. (Removed once the last family is converted.)
#pragma once

#include <string>
#include <vector>

#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

inline void AppendRawArgs(const std::string& family, const std::vector<std::string>& argv,
                          std::vector<PlannedDevice>* out) {
  if (argv.empty()) return;
  PlannedDevice d;
  d.family = family;
  for (size_t i = 0; i + 1 < argv.size(); i += 2) d.host_args.push_back({argv[i], argv[i + 1]});
  out->push_back(std::move(d));
}

}  // namespace qlaunch::qemu
