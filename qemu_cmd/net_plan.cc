#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

void PlanNetDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {}

}  // namespace qlaunch::qemu
