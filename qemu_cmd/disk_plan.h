// The disk family: <disk> as -blockdev + -device (qemu_cmd/disk_plan.cc).
#pragma once

#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

// The index a target name stands for: "hda" -> 0, "vdb" -> 1, "sdaa" -> 26; -1 if none.
int DiskNameToIndex(const std::string& name);

// Appends the options for the domain's disks. Throws DiagnosticError for a bus qlaunch
// cannot render.
void RenderDisks(const domain::DomainDef& def, std::vector<std::string>* argv);

}  // namespace qlaunch::qemu
