// QEMU's own mount namespace (docs/security.md), as libvirt's `namespaces = ["mount"]` makes it:
// a private /dev holding only what the domain needs, and a /proc of its own mounted with
// hidepid=invisible, so that QEMU sees no process of another user (another domain's QEMU) at all.
//
//   /dev: null zero full random urandom, ptmx and the host's /dev/pts (so that the pty of a
//         <serial type='pty'> is the host's /dev/pts/N that `qlaunch console` opens), kvm for
//         an -accel kvm, net/tun and vhost-net where QEMU opens them itself, the block devices
//         the domain names (at the paths it names them), the hugetlbfs mounts under /dev (the
//         hugepage mem-path directories), and the fd, stdin, stdout, stderr links.
//   /proc: hidepid=invisible. Not a PID namespace: QEMU would report its threads' ids in that
//         namespace (query-cpus-fast's thread-id), and qlaunch pins vCPU threads by those ids.
//
// Planned in the parent (every path and number allocated there); entered by the child of
// spawn_child.h between the clone and the privilege drop, with raw system calls only. The new
// /dev is built on a tmpfs mounted at `staging` (an empty directory of the domain's state dir) in
// the child's namespace, then moved over /dev: nothing of it is mounted in qlaunch's namespace.
// Every mount is a slave of the host's: mounts made on the host later (a hugetlbfs) reach QEMU,
// none of QEMU's reaches the host.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "domain/domain_def.h"

namespace qlaunch::launcher {

struct MountNamespacePlan {
  std::string staging;  // where the new /dev is built, then moved from
  struct Node {
    std::string path;  // under staging
    mode_t mode = 0;   // type and permissions, as on the host
    dev_t rdev = 0;
    uid_t uid = 0;
    gid_t gid = 0;
  };
  std::vector<std::string> dirs;  // under staging, made in this order
  std::vector<Node> nodes;
  struct Bind {
    std::string from, to;  // to: under staging
  };
  std::vector<Bind> binds;
  struct Link {
    std::string target, path;  // path: under staging
  };
  std::vector<Link> links;
};

// The plan for QEMU's `argv` (its accelerator and netdevs say which devices it opens itself),
// the device nodes the domain names (`device_paths`: block devices, from its label targets) and
// the hugetlbfs mounts of this host under /dev. `staging` must exist, be empty and be visible
// to root only.
MountNamespacePlan PlanQemuMounts(const std::vector<std::string>& argv, const std::vector<std::string>& device_paths,
                                  const std::filesystem::path& staging);

// The plan for a domain's QEMU, built in <domain_dir>/dev (made here, empty); nullopt when
// qlaunch is not root or QLAUNCH_ISOLATION=off.
std::optional<MountNamespacePlan> QemuMountsFor(const domain::DomainDef& def, const std::vector<std::string>& argv,
                                                const std::filesystem::path& domain_dir);

// In the child, as root, single-threaded: unshares the mount namespace and builds the plan.
// Returns nullptr, or the step that failed (errno says why). Async-signal-safe.
const char* EnterQemuMounts(const MountNamespacePlan& plan);

}  // namespace qlaunch::launcher
