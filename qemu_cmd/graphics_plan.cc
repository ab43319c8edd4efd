#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

void PlanGraphicsDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {}

}  // namespace qlaunch::qemu
