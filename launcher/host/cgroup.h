// A domain's own cgroup (cgroup v2): QEMU runs in <cgroup2 mount>/qlaunch.slice/<name>, like
// libvirt's machine.slice, with cpuset.cpus from <emulatorpin>/<vcpupin> and cpuset.mems from
// <numatune> when the cpuset controller can be enabled there. The child is born in it (clone3's
// CLONE_INTO_CGROUP: not one QEMU thread starts outside it); the directory is recorded in the state dir
// ("cgroup") and removed with it. A cgroup of that name in use by another state root's domain
// (a migration's destination on the same host) is left alone: this one is <name>.2 (.3, ...).
// Where there is no writable cgroup v2, or no cpuset controller in it (a host with cpuset bound
// to cgroup v1), the start goes on and says so in its notes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/id_set.h"
#include "domain/domain_def.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

struct CgroupCpuset {
  IdSet cpus;  // empty: not restricted
  IdSet mems;  // empty: not restricted
};

// cpus: the pinned CPUs (<emulatorpin> and every <vcpupin>) plus the thread-contexts' CPUs, so
// preallocation still runs where it was planned; empty without pins. mems: the host nodes of
// <numatune> (its memory nodeset and every memnode) plus every backend's host-nodes; empty
// without a numatune nodeset.
CgroupCpuset PlanCgroupCpuset(const domain::DomainDef& def, const qemu::LaunchPlan& plan);

// The first cgroup2 mount in /proc/self/mounts; nullopt when there is none.
std::optional<std::filesystem::path> Cgroup2Mount();

class DomainCgroup {
 public:
  // Creates the domain's cgroup and applies what of `cpuset` it can; appends to *notes what it
  // could not do. nullopt (with a note) when no cgroup v2 is mounted and writable.
  static std::optional<DomainCgroup> Create(const std::string& name, const CgroupCpuset& cpuset,
                                            std::vector<std::string>* notes);
  DomainCgroup(DomainCgroup&& o) noexcept;
  DomainCgroup& operator=(DomainCgroup&&) = delete;
  ~DomainCgroup();  // closes fd(); the directory goes with the state dir

  const std::filesystem::path& dir() const { return dir_; }
  // The directory, open for reading: the child is cloned into it (SpawnSpec::cgroup_fd).
  int fd() const { return fd_; }

 private:
  DomainCgroup() = default;
  std::filesystem::path dir_;
  int fd_ = -1;
};

// rmdir of a domain cgroup once its processes are gone (waits up to a second for exiting
// threads); a missing directory is fine.
void RemoveCgroup(const std::filesystem::path& dir);

}  // namespace qlaunch::launcher
