// --run-early: the guest runs as soon as QEMU is ready, while qlaunch's workers go on filling
// its memory behind it; `start` returns once the memory is full.
//
// That is safe only for memory whose pages can no longer run out once QEMU has mapped it:
// hugetlb memfds that qlaunch fills (their pages are reserved at mmap, so neither the guest's
// first touch nor a worker's fault can fail later). Everything else is refused before anything is
// created, with the reason: memory QEMU preallocates itself (it does so before it answers QMP, so
// nothing would run early), 4 KiB pages (shmem reserves nothing: the host could run short under
// a running guest), and <locked/> (QEMU locks, and so faults in, all memory before the guest runs).
#pragma once

#include <optional>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// Why this plan cannot run early (naming the backend and the XML line), or nullopt.
std::optional<Diagnostic> RunEarlyRefusal(const qemu::LaunchPlan& plan, const domain::DomainDef& def);

}  // namespace qlaunch::launcher
