// Pre-flight: what `qlaunch start` checks and prepares on the host before it creates or spawns
// anything (hugepage pools, /dev/kvm), and the mem-path directories QEMU will need.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/kvm_device.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// Compares the plan's hugepage needs with what the host's pools really have: free pages minus
// those reserved but not yet faulted in (`reserved`, per page size: ReadReservedHugepages in
// pool_reserved.h; empty = none). Needs are summed per (node, page size). A need bound to a node
// must fit that node's pool (free minus reserved where the size's pool sits on one node: the
// kernel does not tell reservations per node); all needs of one page size together must fit the
// free minus reserved pages of all nodes. Returns one error per shortfall, e.g.
//   "not enough 2 MiB hugepages on host node 0: the domain needs 3072, 1536 are free (4608 free,
//    3072 of them reserved by mappings not filled yet, such as a start under way; ...)".
std::vector<Diagnostic> CheckHugepagePools(const std::vector<qemu::LaunchPlan::PoolNeed>& needs,
                                           const numa::HostTopology& host,
                                           const std::map<uint64_t, uint64_t>& reserved = {});
inline std::vector<Diagnostic> CheckHugepagePools(const qemu::LaunchPlan& plan, const numa::HostTopology& host) {
  return CheckHugepagePools(plan.pool_needs, host);
}

// A domain of type 'kvm' on a host where KVM is not usable: an error naming the file and line
// of <domain type=...>, suggesting type='qemu'. Empty otherwise. KVM is judged by
// qemu::KvmUsable (qemu_cmd/kvm_device.h), the same check that sets caps.kvm.
std::vector<Diagnostic> CheckAccelerator(const domain::DomainDef& def,
                                         const std::filesystem::path& kvm_dev = qemu::KvmDevicePath());

// The directories to create for the plan's file backends: the mem-paths (never /proc/self/fd/N)
// that lie under one of `roots` (hugetlbfs mounts, the domain's memory_backing_dir) and do not
// exist yet, with their missing parents below that root, parents first. A mem-path elsewhere
// (an nvdimm's file) is the user's business and is left alone.
std::vector<std::filesystem::path> MissingMemPathDirs(const qemu::LaunchPlan& plan,
                                                      const std::vector<std::filesystem::path>& roots);

}  // namespace qlaunch::launcher
