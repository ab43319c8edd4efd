// The graphics family's planner, in parts: displays and audio (graphics_plan.cc), video
// (video_plan.cc), inputs, redirdevs and their USB ports (input_plan.cc), sound (sound_plan.cc).
// PlanGraphicsDevices (device_plan.h) calls them in libvirt 9.0's argv order: inputs, audiodev,
// graphics, video, sound, redirdevs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

// libvirt's audiodev alias ("audio1": libvirt's implicit <audio id='1'>).
inline constexpr const char* kAudioId = "audio1";

// USB ports of the devices on the first USB controller's bus "usb.0", as libvirt assigns them
// (qemuDomainAssignUSBAddresses): explicit <address type='usb'> ports are reserved first, then
// the others take the lowest free root port in libvirt's order: usb disks, usb inputs,
// redirdevs. Keys are indexes in devices.disks / inputs / redirdevs.
struct UsbPort {
  std::string bus;   // "usb.0", "usb1.0" (controller index N > 0)
  std::string port;  // "1", "1.2"
};
struct UsbPorts {
  std::map<size_t, UsbPort> disks, inputs, redirdevs;
};
// Throws DiagnosticError when USB is disabled (<controller type='usb' model='none'>) but a USB
// device is present, or when the controller has no free port left (libvirt would add a
// usb-hub; qlaunch does not).
UsbPorts AssignUsbPorts(const DeviceContext& ctx);
// Root ports of a USB controller model (libvirt's virDomainUSBAddressControllerModelToPorts).
unsigned UsbControllerPorts(const std::string& model, std::optional<unsigned> ports);

// The port a graphics device listens on: the fixed one, the one `start` picked
// (DeviceResources::graphics_ports), or for domxml-to-native libvirt's pretend values (vnc
// 5900, spice 5901). 0: no TCP port (spice without port and autoport).
int GraphicsPort(const DeviceContext& ctx, size_t index);

void PlanInputDevices(const DeviceContext& ctx, const UsbPorts& usb, std::vector<PlannedDevice>* out);
void PlanAudioAndDisplays(const DeviceContext& ctx, std::vector<PlannedDevice>* out);
void PlanVideoDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);
void PlanSoundDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out);
void PlanRedirDevices(const DeviceContext& ctx, const UsbPorts& usb, std::vector<PlannedDevice>* out);

}  // namespace qlaunch::qemu
