// Pre-flight: what `qlaunch start` checks and prepares on the host before it creates or spawns
// anything (hugepage pools, /dev/kvm), and the mem-path directories QEMU will need.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// Compares the plan's hugepage needs with the host's free pools. Needs are summed per
// (node, page size). A need bound to a node must fit that node's free pool; unbound needs
// (node -1) and every need of their page size together must fit the free pages of all nodes.
// Returns one error per shortfall, e.g.
//   "not enough 2 MiB hugepages on host node 0: the domain needs 64, 10 are free (...)".
// Note: the kernel's per-node free count still includes pages other mappings have reserved
// but not faulted in yet (HugePages_Rsvd), so a pool can look bigger than it is.
std::vector<Diagnostic> CheckHugepagePools(const std::vector<qemu::LaunchPlan::PoolNeed>& needs,
                                           const numa::HostTopology& host);
inline std::vector<Diagnostic> CheckHugepagePools(const qemu::LaunchPlan& plan, const numa::HostTopology& host) {
  return CheckHugepagePools(plan.pool_needs, host);
}

// A domain of type 'kvm' on a host where KVM is not usable: an error naming the file and line
// of <domain type=...>, suggesting type='qemu'. Empty otherwise. KVM is judged by
// qemu::KvmUsable (qemu_cmd/kvm_device.h), the same check that sets caps.kvm.
std::vector<Diagnostic> CheckAccelerator(const domain::DomainDef& def,
                                         const std::filesystem::path& kvm_dev = "/dev/kvm");

// The directories to create for the plan's file backends: the mem-paths (never /proc/self/fd/N)
// that lie under one of `roots` (hugetlbfs mounts, the domain's memory_backing_dir) and do not
// exist yet, with their missing parents below that root, parents first. A mem-path elsewhere
// (an nvdimm's file) is the user's business and is left alone.
std::vector<std::filesystem::path> MissingMemPathDirs(const qemu::LaunchPlan& plan,
                                                      const std::vector<std::filesystem::path>& roots);

}  // namespace qlaunch::launcher
