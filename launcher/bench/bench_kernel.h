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

// The "overlap" starter: the kernel reference and QEMU's floor started together (populate_ref
// forked, then the floor's QEMU spawned at once), timed from the fork until both are done: what a
// start that overlaps the fill with QEMU's start-up takes on this host with no launcher at all,
// each taking from the other what CPUs they share. Against kernel + floor it is the best ratio the
// host allows a start; qlaunch's total minus it is what qlaunch adds to that.
std::unique_ptr<Starter> MakeOverlapStarter(const BenchConfig& cfg, const domain::DomainDef& def,
                                            const std::string& populate_ref);

}  // namespace qlaunch::launcher
