// Hugepages as a Slurm generic resource (GRES): the gres.conf and slurm.conf lines that declare
// this host's hugepage pools to Slurm, and the --gres argument a domain needs, so that
// `sbatch --gres=hugepages:2M:N qlaunch run vm.xml` places and queues VMs by their pages.
// The unit is pages of the size named by the type ("2M", "1G"). Pure: from a HostTopology and
// a plan's pool needs; only LogicalCores reads sysfs (the CPU topology under the host's root).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/id_set.h"
#include "numa/host_topology.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

inline constexpr const char* kGresName = "hugepages";

// The GRES type of a page size: "2M", "1G", "64K" (the largest unit that divides it).
std::string GresType(uint64_t page_bytes);

// Slurm's logical core indices (core 0 is the first core of the first socket, as lstopo's L#)
// of the cores that `cpus` (OS CPU ids) belong to, from <sysfs>/devices/system/cpu/cpuN/topology
// (physical_package_id, core_id) of every online CPU. Empty when the topology cannot be read.
IdSet LogicalCores(const numa::HostTopology& host, const IdSet& cpus);

struct GresConfig {
  std::vector<std::string> gres_conf;  // gres.conf lines
  std::string gres_types;              // slurm.conf: GresTypes=...
  std::string node_gres;               // slurm.conf: NodeName=<node> ... Gres=...
  bool empty() const { return gres_conf.empty(); }
};

// One gres.conf line per page size with pages (nr_hugepages), and where several host nodes
// have a pool of that size one per node, with the node's logical Cores=.
GresConfig HostGresConfig(const numa::HostTopology& host, const std::string& node_name);
// The text `capabilities --format gres` prints: both files' lines, with comments.
std::string FormatGresConfig(const GresConfig& config, const std::string& node_name);

// The --gres argument for these needs: "hugepages:2M:3072" (sizes ascending, comma-separated);
// "" when the domain takes no hugepages.
std::string GresArgument(const std::vector<qemu::LaunchPlan::PoolNeed>& needs);

}  // namespace qlaunch::launcher
