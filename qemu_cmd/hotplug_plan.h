// A device attached to, or detached from, a running domain, as libvirt 9.0 does it
// (qemuDomainAttachDeviceLive / qemuDomainDetachDeviceLive). The device is planned by its
// family's planner, the same code as at start, as a pure function of the running domain (its
// definition, the devices it runs with their ids and PCI slots) and the new element; then its
// ids follow libvirt's hot-plug rules (the next free alias index, the next node name), it gets
// a free hotpluggable PCI slot, and its backends and device become QMP commands, each with the
// command that undoes it. Pure: the launcher (launcher/lifecycle/change/hotplug.h) makes the tap or the
// socket, runs the commands and records the result.
//
// Supported: <disk> (file and block, virtio/sata/scsi/ide/usb bus, disk and cdrom), <interface>
// (user, ethernet, bridge), <rng> (random and egd), <channel>, a scsi <controller> (the only
// controller libvirt 9.0 hot-plugs). Anything else is refused with the reason, naming the device
// file and line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "domain/parse_fragment.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/hotplug_qmp.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

struct RunningDomain {
  const domain::DomainDef* def = nullptr;  // the running definition (as given, plus what was attached since)
  std::vector<DeviceRecord> devices;        // what QEMU runs (plan.json): ids, properties, PCI slots
  unsigned node_index = 0;                  // the highest N of the libvirt-N node names used so far
  std::string channel_dir;                  // where unix channels without a path have their socket
};

// One step of an attach: the command, and the one that undoes it when a later step fails.
struct HotplugStep {
  QmpCall call, undo;
};

struct AttachPlan {
  std::string element;                 // "disk", "interface", "rng", "channel"
  DeviceRecord record;                 // the device as it will run (plan.json's record; line: the file's)
  std::vector<HotplugStep> steps;      // backends first, device_add last
  unsigned node_index = 0;             // the domain's node index after this attach
  // What the host provides before the steps run (launcher/lifecycle/change/hotplug.cc):
  std::string fd_name;                 // the name the fd is passed under (getfd); "" when none
  enum class HostFd { kNone, kTap, kListenSocket } host_fd = HostFd::kNone;
  std::string socket_path;             // kListenSocket: where qlaunch makes the socket
  const domain::Interface* nic = nullptr;  // kTap: the interface (in the fragment)
  std::vector<std::string> files;      // disk images QEMU's user must be able to open
};

// Throws DiagnosticError naming the fragment's file, line and element: a kind qlaunch does not
// hot-plug, a target, MAC or PCI address already used, no free hotpluggable slot, a controller
// the device needs and the domain lacks.
AttachPlan PlanAttach(const RunningDomain& running, const domain::DeviceFragment& fragment, const QemuCaps& caps);

// The running devices as the PCI assignment sees them (AssignHotplugPciAddress): each record with
// its id, properties and PCI slot.
std::vector<PlannedDevice> RunningPlannedDevices(const RunningDomain& running);

// libvirt's next alias index over the running devices: one past the highest PREFIX<N> in use.
unsigned NextAliasIndex(const std::vector<DeviceRecord>& devices, const std::string& prefix);

struct DetachPlan {
  std::string element;
  size_t record = 0;                   // index in running.devices
  std::string id;                      // device_del's
  std::vector<QmpCall> release;        // after DEVICE_DELETED: its backends, in order
  int running_line = 0;                // the element's line in the running definition
};

// The running device the fragment names, as libvirt matches it: a disk by its target, an
// interface by its MAC (or the only one), an rng by its backend, a channel by its target name.
// Throws DiagnosticError (fragment file and line) when none or several match.
DetachPlan PlanDetach(const RunningDomain& running, const domain::DeviceFragment& fragment);

}  // namespace qlaunch::qemu
