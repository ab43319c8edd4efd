#include "qemu_cmd/machine_plan.h"

namespace qlaunch::qemu {

MachineArgs PlanMachine(const DeviceContext& ctx) { return {}; }

}  // namespace qlaunch::qemu
