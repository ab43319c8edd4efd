#include "qemu_cmd/device_plan.h"

#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/pci_address.h"

namespace qlaunch::qemu {

bool IsQ35(const std::string& machine) { return machine == "q35" || machine.starts_with("pc-q35-"); }

std::vector<PlannedDevice> PlanDevices(const DeviceContext& ctx) {
  std::vector<PlannedDevice> devices;
  // libvirt 9.0's argv order: controllers, memory devices, disks, networks, character devices,
  // inputs, graphics, video, sound, watchdog, redirdevs, balloon, rng.
  PlanControllers(ctx, &devices);
  PlanMemoryDevices(ctx, &devices);
  PlanDiskDevices(ctx, &devices);
  PlanNetDevices(ctx, &devices);
  PlanCharDevices(ctx, &devices);
  PlanGraphicsDevices(ctx, &devices);
  PlanMiscDevices(ctx, &devices);
  AssignPciAddresses(ctx, &devices);
  return devices;
}

std::vector<std::string> RenderDevicePlan(const std::vector<PlannedDevice>& devices) {
  std::vector<std::string> argv;
  auto push = [&](const DeviceArg& a) {
    argv.push_back(a.opt);
    if (!a.value.empty()) argv.push_back(a.value);
  };
  for (const PlannedDevice& d : devices) {
    for (const DeviceArg& a : d.host_args) push(a);
    if (!d.driver.empty()) {
      KeyValueBuilder dev(d.driver);
      if (!d.id.empty()) dev.Add("id", std::string_view(d.id));
      for (const auto& [key, value] : d.props) dev.Add(key, std::string_view(value));
      if (d.slot) {
        dev.Add("bus", std::string_view(d.slot->bus));
        std::string addr = "0x" + ToHex(d.slot->slot);
        if (d.slot->function) addr += ".0x" + ToHex(d.slot->function);
        dev.Add("addr", std::string_view(addr));
        if (d.slot->multifunction) dev.AddBool("multifunction", true);
      }
      argv.push_back("-device");
      argv.push_back(dev.str());
    }
    for (const DeviceArg& a : d.after_args) push(a);
  }
  return argv;
}

}  // namespace qlaunch::qemu
