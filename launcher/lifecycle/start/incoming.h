// The destination's side of a migration, once an incoming QEMU (`-incoming defer`, planned with
// PlanOptions::incoming) has its memory and has answered qmp_capabilities: the migration
// capabilities both ends must agree on, then migrate-incoming, then where QEMU listens.
#pragma once

#include <chrono>
#include <string>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/start/migration_uri.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

// migrate-set-capabilities (migration_settings.h: "events", and "x-ignore-shared" as the source
// sets it, both named), (for an fd: URI, `getfd` of `fd` under the URI's name,) migrate-incoming; returns the URI QEMU listens on, as a source would
// give it to `migrate` (a tcp port 0 replaced by the port QEMU took, from query-migrate's
// socket-address).
std::string ListenIncoming(qemu::QmpClient& qmp, const MigrationUri& uri, bool ignore_shared,
                           std::chrono::milliseconds timeout, int fd = -1);

// The destination's "incoming" file (state_dir.h) stays until a verb sees that QEMU has the guest:
// when the file is there and QEMU's status is no longer inmigrate, it is removed, so the domain's
// state is running (or paused) from then on. Called by RunningQemu and list before they read the
// state; a QEMU that does not answer within `timeout` leaves the file as it is.
void SettleIncoming(const StateDir& state, const std::string& name,
                    std::chrono::milliseconds timeout = std::chrono::seconds(2));

}  // namespace qlaunch::launcher
