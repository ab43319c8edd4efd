#include "qemu_cmd/pci_address.h"

#include <cstdio>

namespace qlaunch::qemu {

std::string ToHex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%x", v);
  return buf;
}

void AssignPciAddresses(const DeviceContext& ctx, std::vector<PlannedDevice>* devices) {}

}  // namespace qlaunch::qemu
