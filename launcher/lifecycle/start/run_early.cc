#include "launcher/lifecycle/start/run_early.h"

#include <string>

namespace qlaunch::launcher {

std::optional<Diagnostic> RunEarlyRefusal(const qemu::LaunchPlan& plan, const domain::DomainDef& def) {
  auto refuse = [&](int line, const char* element, std::string why) {
    Diagnostic d;
    d.file = def.file;
    d.line = line;
    d.element = element;
    d.message = "--run-early: " + why;
    return d;
  };
  if (def.memory_backing.locked)
    return refuse(def.memory_backing.line, "memoryBacking",
                  "<locked/>: QEMU locks, and so faults in, all guest memory before the guest can run");
  for (const qemu::MemoryBackend& b : plan.backends) {
    if (b.prealloc == qemu::PreallocBy::kQemu) {
      return refuse(def.memory_backing.allocation_line, "allocation",
                    "memory backend " + b.id + " is preallocated by QEMU, which finishes before the guest can run (" +
                        b.prealloc_reason +
                        "); only shared hugetlb memfds filled by qlaunch can run early (<source type='memfd'/>, "
                        "<access mode='shared'/>, <hugepages>)");
    }
    if (b.prealloc == qemu::PreallocBy::kLauncher && b.page_size_bytes == 0) {
      return refuse(def.memory_backing.line, "memoryBacking",
                    "memory backend " + b.id + " has 4 KiB pages, which are not reserved when mapped: the host could "
                    "run out of memory under the running guest; use <hugepages>");
    }
  }
  return std::nullopt;
}

}  // namespace qlaunch::launcher
