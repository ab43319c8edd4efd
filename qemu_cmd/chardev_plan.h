// The character device family: <serial>, <console>, <channel> (qemu_cmd/chardev_plan.cc).
#pragma once

#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

// Appends -chardev/-serial (and virtio-console) options. A pty serial goes to
// opts.log_file (a file chardev) when that is set. A <console> of target type serial is the
// first <serial> (as in libvirt) and is only rendered when there is no <serial>.
void RenderCharDevs(const domain::DomainDef& def, const PlanOptions& opts, std::vector<std::string>* argv);

}  // namespace qlaunch::qemu
