#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

void PlanMiscDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const domain::Devices& devs = ctx.def->devices;
  if (devs.memballoon_model && *devs.memballoon_model == "virtio") {
    PlannedDevice d;
    d.family = "misc";
    d.driver = "virtio-balloon-pci";
    d.id = "balloon0";
    out->push_back(std::move(d));
  }
  if (devs.panic) {  // ISA, port 0x505
    PlannedDevice d;
    d.family = "misc";
    d.driver = "pvpanic";
    out->push_back(std::move(d));
  }
}

}  // namespace qlaunch::qemu
