#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

void PlanControllers(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {}

}  // namespace qlaunch::qemu
