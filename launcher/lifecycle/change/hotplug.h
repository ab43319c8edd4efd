// attach-device and detach-device on a running domain (live), as libvirt 9.0 does them. The
// device is planned by the pure hot-plug planner (qemu_cmd/hotplug_plan.h) from the running
// definition (launcher/lifecycle/change/running_def.h); qlaunch makes on the host what the device needs
// (the image's owner for QEMU's user, a tap, a listening socket), runs the QMP commands, and
// records the change in the state dir. Nothing changes when a step fails: the commands already
// run are undone in reverse, the tap and socket removed, the image's owner given back, and the
// error says why. Detach asks QEMU to remove the device (device_del), waits for the guest to
// release it (DEVICE_DELETED), and only then removes its backends and gives its image back;
// when the guest does not release it in time, it stays attached and recorded, and the next
// attach-device or detach-device finishes the removal once QEMU reports it gone.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/id_set.h"
#include "launcher/host/state_dir.h"
#include "qemu_cmd/device_plan.h"

namespace qlaunch::launcher {

struct HotplugOptions {
  std::chrono::milliseconds qmp_timeout{10000};
  std::chrono::milliseconds detach_wait{10000};  // for DEVICE_DELETED
};

struct HotplugResult {
  std::string element;                 // "disk", "interface", ...
  std::string id;                      // the alias
  std::optional<qemu::PciSlot> slot;   // attach: the PCI address it got
  std::string tap;                     // attach of a tap interface: its name
  bool released = true;                // detach: the guest released it in time
  double ms = 0;                       // the QMP part
  // attach of a memory device: who filled its memory ("launcher": qlaunch, before QEMU saw it;
  // "qemu": inside object-add; "warm": nobody, a warm file of the pool, launcher/host/warm_pool.h)
  // and how long that took
  std::string prealloc;
  double fill_ms = 0;
  // qlaunch's fill ("launcher"): its workers, the CPUs they were pinned to and those they were
  // seen running on (sched_getcpu), as `qlaunch prealloc --json` reports a region's
  unsigned fill_threads = 0;
  IdSet fill_cpus, fill_observed_cpus;
};

nlohmann::json ToJson(const HotplugResult& r);

// Throws DiagnosticError for a device file that cannot be attached (naming it), NotRunningError,
// WrongStateError, std::runtime_error for what QEMU or the host refused.
HotplugResult AttachDevice(const StateDir& state, const std::string& name, const std::string& device_file,
                           const HotplugOptions& opts = {});
HotplugResult DetachDevice(const StateDir& state, const std::string& name, const std::string& device_file,
                           const HotplugOptions& opts = {});

}  // namespace qlaunch::launcher
