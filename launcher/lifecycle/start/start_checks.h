// The checks of `qlaunch start` that need nothing created yet (launcher/lifecycle/start/start.cc): the
// emulator path before probing; after planning, a domain of that name that already runs, and
// every problem of this host with the plan (KVM, RLIMIT_MEMLOCK, --run-early, /dev/kvm for
// QEMU's user, the hugepage pools), reported together.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "launcher/host/qemu_user.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/start/start.h"
#include "numa/host_topology.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// A bad emulator path is reported before probing, naming where the path came from.
void CheckEmulator(const std::string& emulator, const StartOptions& opts, const domain::DomainDef& def);

// <locked/> with an unprivileged QEMU: QEMU mlocks all guest memory, which it may only do within
// RLIMIT_MEMLOCK (root's QEMU has CAP_IPC_LOCK instead). The child raises the limit before it
// drops root; some hosts (containers) refuse that even to root. Find out here, on ourselves
// (raising qlaunch's own limit is harmless), and refuse before anything is created.
std::optional<Diagnostic> CheckMemlockLimit(const domain::DomainDef& def, const QemuUser& user);

// AlreadyRunningError when a domain of that name runs or is being started: a clear refusal
// before the pool check.
void RefuseIfRunning(const StateDir& state, const std::string& name);

// The running domains of this state root, other than `name`, whose QEMU runs as `user`
// (USER:GROUP, as <dir>/user records it): a user named (--user, <seclabel>) for two domains.
std::vector<std::string> DomainsRunningAs(const StateDir& state, const std::string& name, const std::string& user);
// What start and validate say about each of them: an escape into either QEMU reaches the other.
std::string SharedUserWarning(const std::string& other, const std::string& user);
// Prints that warning for each.
void WarnSharedUser(const StateDir& state, const std::string& name, const std::string& user);

// Every problem this host has with the plan; throws them together as one DiagnosticError (each
// without a file naming the domain's), or returns when there is none. `reserved_pages`: the
// pages per size reserved but not yet faulted in (host/pool_reserved.h), not free for this start.
void CheckHostForPlan(const domain::DomainDef& def, const qemu::LaunchPlan& plan, const numa::HostTopology& host,
                      const std::map<uint64_t, uint64_t>& reserved_pages, const QemuUser& qemu_user,
                      bool run_early);

}  // namespace qlaunch::launcher
