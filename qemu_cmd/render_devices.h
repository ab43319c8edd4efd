// Rendering of the ordinary devices qlaunch supports: disks (-drive if=none + -device, a form
// QEMU 5.2 and 7.2 both accept), serial/console character devices and the balloon.
#pragma once

#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

// The index a target name stands for: "hda" -> 0, "vdb" -> 1, "sdaa" -> 26; -1 if none.
int DiskNameToIndex(const std::string& name);

// Appends the options for the domain's disks. Throws DiagnosticError for a bus qlaunch
// cannot render.
void RenderDisks(const domain::DomainDef& def, std::vector<std::string>* argv);

// Appends -chardev/-serial (and virtio-console) options. A pty serial goes to
// opts.log_file (a file chardev) when that is set. A <console> of target type serial is the
// first <serial> (as in libvirt) and is only rendered when there is no <serial>.
void RenderCharDevs(const domain::DomainDef& def, const PlanOptions& opts, std::vector<std::string>* argv);

}  // namespace qlaunch::qemu
