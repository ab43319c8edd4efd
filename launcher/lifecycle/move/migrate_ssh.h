// MigrateOverSsh: `qlaunch migrate NAME ssh://[USER@]HOST[:PORT]`, the daemonless counterpart of
// `virsh migrate --p2p qemu+ssh://`: qlaunch prepares the destination itself, then migrates to it.
//
//   1. the live XML of NAME (domain_xml.h), as `qlaunch dumpxml` prints it;
//   2. ssh [-p PORT] [-l USER] [-i FILE] -o BatchMode=yes [-o OPT]... -- HOST
//        '<remote-qlaunch> start --incoming tcp:0.0.0.0:0 --json -'   with the XML on its stdin
//      (tcp:[::]:0 when QEMU is to connect to an IPv6 address); its JSON names the port it took;
//   3. MigrateDomain (migrate.h) to tcp:HOST:PORT, HOST the URI's or --migrate-host's;
//   4. once QEMU says completed (the destination loaded the guest: the return path), and before
//      the source lets go, `<remote-qlaunch> dominfo --json NAME` must say running or paused (as
//      the source was): a destination that has ended meanwhile, or says anything else, is
//      destroyed over ssh and the source resumes (the confirm phase of libvirt's migration).
//
// Failures: ssh or the remote start failing is an error with the remote's stderr, nothing started
// here or there. Once the destination listens, a migration that does not complete (failed,
// SIGINT/SIGTERM, --timeout-action abort) tears it down over ssh (`<remote-qlaunch> destroy NAME`;
// a destination QEMU that has ended already is "not running" to it, its stale state cleared, and
// the error says it had ended); the source runs on. SIGINT/SIGTERM while the destination is
// being prepared is taken once the remote start has returned (ssh runs in its own process
// group), and tears it down then.
#pragma once

#include <string>
#include <vector>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/move/migrate.h"
#include "launcher/lifecycle/start/migration_uri.h"

namespace qlaunch::launcher {

struct SshMigrateOptions {
  std::string remote_qlaunch = "qlaunch";  // a shell command line run on the remote host
  std::vector<std::string> ssh_options;    // each passed as -o OPT
  std::string identity;                    // -i FILE; "" = ssh's default
  std::string migrate_host;                // the address QEMU connects to; "" = the URI's host
  std::string ssh = "ssh";                 // the ssh client (looked up in $PATH)
};

// The argv of ssh running `remote_command` (one shell command line) on `uri`'s host.
std::vector<std::string> SshArgv(const MigrationUri& uri, const SshMigrateOptions& o,
                                 const std::string& remote_command);

// "<remote-qlaunch> start --incoming tcp:0.0.0.0:0 --json -" (tcp:[::]:0 for an IPv6 connect host).
std::string RemoteStartCommand(const SshMigrateOptions& o, const std::string& connect_host);
// "<remote-qlaunch> destroy NAME" (NAME shell-quoted).
std::string RemoteDestroyCommand(const SshMigrateOptions& o, const std::string& name);

// "<remote-qlaunch> dominfo --json NAME" (NAME shell-quoted).
std::string RemoteDominfoCommand(const SshMigrateOptions& o, const std::string& name);

// Whether a destination's `dominfo --json` answer (`status`: ssh's exit status, `out`, `err`)
// says it has the guest in `want` ("running" or "paused"): "" if so, else why not.
std::string DestinationHasGuest(int status, const std::string& out, const std::string& err, const std::string& want);

// The host QEMU connects to: --migrate-host, else the ssh URI's host.
std::string ConnectHost(const MigrationUri& uri, const SshMigrateOptions& o);
// tcp:CONNECT_HOST:PORT, PORT from the remote start's "incoming" (tcp:0.0.0.0:PORT). Throws
// std::runtime_error when `incoming` is no tcp URI with a port.
std::string ConnectUri(const std::string& connect_host, const std::string& incoming);

// opts.uri is the ssh:// URI. Throws as MigrateDomain does, and std::runtime_error when the
// destination cannot be prepared; the report's "destination" says how it was.
MigrateReport MigrateOverSsh(const StateDir& state, MigrateOptions opts, const SshMigrateOptions& ssh);

}  // namespace qlaunch::launcher
