// The destination's side of a migration, once an incoming QEMU (`-incoming defer`, planned with
// PlanOptions::incoming) has its memory and has answered qmp_capabilities: the migration
// capabilities both ends must agree on, then migrate-incoming, then where QEMU listens.
#pragma once

#include <chrono>
#include <string>

#include "launcher/lifecycle/start/migration_uri.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

// migrate-set-capabilities (migration_settings.h: "events", and "x-ignore-shared" as the source
// sets it, both named), (for an fd: URI, `getfd` of `fd` under the URI's name,) migrate-incoming; returns the URI QEMU listens on, as a source would
// give it to `migrate` (a tcp port 0 replaced by the port QEMU took, from query-migrate's
// socket-address).
std::string ListenIncoming(qemu::QmpClient& qmp, const MigrationUri& uri, bool ignore_shared,
                           std::chrono::milliseconds timeout, int fd = -1);

}  // namespace qlaunch::launcher
