#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/raw_args.h"
#include "qemu_cmd/render_devices.h"

namespace qlaunch::qemu {

void PlanCharDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  std::vector<std::string> argv;
  RenderCharDevs(*ctx.def, *ctx.opts, &argv);
  AppendRawArgs("chardev", argv, out);
}

}  // namespace qlaunch::qemu
