// The QMP steps of `qlaunch start` (launcher/lifecycle/start/start.cc): the greeting, within the time
// QEMU may take to preallocate; before cont, the plan's device state and the thread-contexts'
// removal; after cont, the wait until QEMU says the guest runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

// How long QEMU may take to preallocate `bytes` itself: 2 ms per MiB (0.5 GB/s, a slow host).
std::chrono::milliseconds PreallocAllowance(uint64_t bytes);

// Connects to the QMP socket qlaunch made (QEMU holds the listening end, so this needs no
// wait) and reads the greeting. QEMU preallocates while it creates the machine, before it
// greets, so the wait includes the preallocation allowance. A QEMU that dies, or is killed on
// an interrupt, resets the connection: the read fails at once, never by timing out.
std::unique_ptr<qemu::QmpClient> ConnectQmp(const std::filesystem::path& socket, std::chrono::milliseconds qmp_timeout,
                                            std::chrono::milliseconds allowance);

// Before cont (and before a destination listens): the vCPUs the domain had plugged at run time
// (<vcpus>: LaunchPlan::plug_vcpus_to), plugged as setvcpus plugs them, so that the machine is
// the one whose state comes in; throws when QEMU refuses one.
void PlugVcpus(qemu::QmpClient& qmp, const qemu::LaunchPlan& plan, std::chrono::milliseconds timeout);

// Before cont: PlugVcpus, the plan's device state commands (set_link ...), then the thread-contexts.
// Thread-contexts only serve preallocation: once it is done, delete them so their idle threads
// go (libvirt does the object-del too). A backend's prealloc-context is a strong QOM link, so
// object-del alone leaves the object, and its thread, alive as long as a backend points at it:
// clear those links first. Failures are warnings; the guest runs either way.
void BeforeCont(qemu::QmpClient& qmp, const qemu::LaunchPlan& plan, std::chrono::milliseconds timeout);

// After cont: QEMU's RESUME event, queued with cont's reply, says the guest runs. Without it (or
// with a STOP after it) query-status is asked, which says running at once (QEMU resumes the
// vCPUs before it answers cont); should it not, wait for the RESUME event, then ask again. No
// polling sleeps.
void WaitRunning(qemu::QmpClient& qmp, std::chrono::milliseconds timeout);

}  // namespace qlaunch::launcher
