#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/raw_args.h"
#include "qemu_cmd/render_devices.h"

namespace qlaunch::qemu {

void PlanDiskDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  std::vector<std::string> argv;
  RenderDisks(*ctx.def, &argv);
  AppendRawArgs("disk", argv, out);
}

}  // namespace qlaunch::qemu
