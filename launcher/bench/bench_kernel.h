// The "kernel" starter of `qlaunch bench`: the kernel's own populate limit for the domain's
// memory, as the yardstick every start divides by. It runs prealloc/bench/populate_ref.c (built
// as `populate_ref` next to qlaunch, installed in lib/qlaunch/): one memfd of the domain's size
// and page size, mapped shared and populated with MADV_POPULATE_WRITE from as many threads as
// qlaunch's own preallocator would use (every CPU this process may run on), no pinning, no NUMA
// policy; timed from fork to exit (the whole process), like the qlaunch starter.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "domain/domain_def.h"
#include "launcher/bench/bench_starters.h"

namespace qlaunch::launcher {

// The populate_ref binary: `explicit_path` when given, else beside this executable, else in
// ../lib/qlaunch/ from it; nullopt when there is none.
std::optional<std::string> FindPopulateRef(const std::string& explicit_path = "");

// What the reference populates for `def`: its whole memory in pages of its (single) hugepage
// size, or of the system's page size without <hugepages>; `host_default_page` stands for <hugepages/> without a
// size. Throws std::runtime_error for a domain with several page sizes.
struct KernelReferenceSize {
  uint64_t bytes = 0;
  uint64_t page_bytes = 0;
};
KernelReferenceSize ReferenceSizeOf(const domain::DomainDef& def, uint64_t host_default_page);

std::unique_ptr<Starter> MakeKernelStarter(const BenchConfig& cfg, const domain::DomainDef& def,
                                           const std::string& populate_ref);

}  // namespace qlaunch::launcher
