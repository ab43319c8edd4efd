// qlaunch migrate: move a running domain to a destination `qlaunch start --incoming` prepared, as
// `virsh migrate --live` does (launcher/lifecycle/move/migrate.h), or to one it prepares over ssh
// (ssh://, launcher/lifecycle/move/migrate_ssh.h).
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/usage_error.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/move/local_swap.h"
#include "launcher/lifecycle/move/migrate.h"
#include "launcher/lifecycle/move/migrate_ssh.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  MigrateOptions m;
  SshMigrateOptions ssh;
  double timeout_s = 0;
  std::string timeout_action = "suspend";
  bool live = false, json = false, local = false;
  std::string qemu;
};

int RunLocal(Options& o) {
  LocalSwapOptions l;
  l.name = o.m.name;
  l.qemu = o.qemu;
  l.drive = o.m.drive;
  const LocalSwapReport r = SwapQemu(StateDir(), l);
  if (o.json) {
    std::printf("%s\n", ToJson(r).dump().c_str());
  } else {
    std::printf("domain %s now runs on a new QEMU (pid %d, %s; was pid %d): %.1f MiB handed over by fd, %.1f MiB "
                "copied, downtime %.0f ms\n",
                r.name.c_str(), static_cast<int>(r.new_pid), r.emulator.c_str(), static_cast<int>(r.old_pid),
                r.handed_over_bytes / 1048576.0, r.drive.ram_transferred / 1048576.0, r.drive.downtime_ms);
  }
  return 0;
}

int Run(Options& o) {
  o.m.drive.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  o.m.drive.timeout_abort = o.timeout_action == "abort";
  if (o.local != o.m.uri.empty())
    throw UsageError(o.local ? "--local takes no URI: the new QEMU runs on this host"
                             : "missing URI: give the destination's URI, or --local");
  if (o.local) return RunLocal(o);
  const MigrateReport r =
      o.m.uri.rfind("ssh://", 0) == 0 ? MigrateOverSsh(StateDir(), o.m, o.ssh) : MigrateDomain(StateDir(), o.m);
  if (o.json) {
    std::printf("%s\n", ToJson(r).dump().c_str());
  } else {
    std::printf("domain %s migrated to %s%s: %.0f ms in all, downtime %.0f ms, %.1f MiB sent of %.1f MiB\n",
                r.name.c_str(), r.uri.c_str(), r.drive.timed_out ? " (paused to finish after --timeout)" : "",
                r.drive.total_ms, r.drive.downtime_ms, r.drive.ram_transferred / 1048576.0,
                r.drive.ram_total / 1048576.0);
  }
  return 0;
}

}  // namespace

void AddMigrateCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "migrate",
      "Move a running (or paused) domain to another host while it runs, as `virsh migrate --live`.\n"
      "The destination is prepared first with `qlaunch start --incoming URI DOMAIN.xml` (or `run\n"
      "--incoming`) there, from this domain's live XML (`qlaunch dumpxml NAME`), so both ends are the\n"
      "same machine; it fills its memory before it listens. The guest keeps running while its memory\n"
      "is copied (live, with or without --live), then pauses for the switch-over; on the destination\n"
      "it runs if it ran here and stays paused if it was paused. This host lets the guest go only once\n"
      "the destination has loaded it and runs it (or keeps it paused): QEMU's return path carries its\n"
      "word back, and over ssh:// qlaunch also asks `<remote-qlaunch> dominfo NAME` (confirm). Only then\n"
      "are this host's QEMU, state, taps, labels, cgroup and hugepages released. Disks are not copied:\n"
      "both ends must see them at the same paths (shared storage). If the migration fails, the\n"
      "destination cannot load the guest or dies before it has confirmed, the command is interrupted\n"
      "(SIGINT/SIGTERM) or --timeout-action abort strikes, the domain runs on here as before (paused if\n"
      "it was) with the migration's settings put back, and the command exits 1 saying why. Unknowable\n"
      "toward a bare `start --incoming` destination (tcp:/unix:): that it keeps running after it said\n"
      "it loaded the guest; if it dies a moment later, the guest is gone with it.\n"
      "URI: tcp:HOST:PORT or unix:PATH, as the destination printed it; or ssh://[USER@]HOST[:PORT],\n"
      "as `virsh migrate --p2p qemu+ssh://`: qlaunch prepares the destination itself, running\n"
      "`ssh [-p PORT] [-l USER] -o BatchMode=yes HOST '<remote-qlaunch> start --incoming tcp:0.0.0.0:0\n"
      "--json -'` with the live XML on its stdin, then migrates to tcp:HOST:PORT (the port it printed;\n"
      "--migrate-host for another address). ssh must log in without a prompt (keys, an agent). If ssh\n"
      "or the remote start fails, the error carries the remote's message and nothing was started; if\n"
      "the migration then does not complete, the destination is destroyed over ssh\n"
      "(`<remote-qlaunch> destroy NAME`) and the domain runs on here.\n"
      "--local [--qemu BINARY]: no other host; a new QEMU (this binary or a newer one) takes over the\n"
      "running guest on this host and the old one goes. The guest's shared hugetlb memory, qlaunch's\n"
      "own memfds, is handed to the new QEMU by fd and not copied (x-ignore-shared), so the pause does\n"
      "not grow with memory. Refused, with nothing changed, for shared memory QEMU made itself, for\n"
      "devices qlaunch made on the host (taps, sockets, VNC/SPICE ports, UEFI vars) and under `run`.\n"
      "A newer binary needs a versioned machine type in the XML (e.g. pc-i440fx-7.2), as QEMU does.\n"
      "Examples: qlaunch migrate vm1 tcp:dest.example:49152 --json\n"
      "          qlaunch migrate vm1 ssh://root@dest.example --ssh-identity ~/.ssh/migrate --progress\n"
      "          qlaunch migrate vm1 --local --qemu /opt/qemu-8.2/bin/qemu-system-x86_64");
  SetKind(sub->add_option("NAME", o->m.name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("URI", o->m.uri, "where the destination listens: tcp:HOST:PORT or unix:PATH; or the host to prepare\n"
                  "it on: ssh://[USER@]HOST[:PORT]; none with --local");
  sub->add_flag("--local", o->local, "replace the domain's QEMU on this host without copying shared memory");
  SetKind(sub->add_option("--qemu", o->qemu, "with --local: the new QEMU binary (default: the one it runs now)"),
          ArgKind::kPath)
      ->needs("--local");
  sub->add_flag("--live", o->live, "accepted as virsh users type it: qlaunch always migrates live");
  sub->add_option("--timeout", o->timeout_s,
                  "seconds after which --timeout-action is taken if the migration has not finished");
  sub->add_option("--timeout-action", o->timeout_action,
                  "suspend: pause the guest so the rest goes across at once (as virsh); abort: cancel, the\n"
                  "domain runs on here")
      ->check(CLI::IsMember({"suspend", "abort"}))
      ->capture_default_str();
  sub->add_option("--bandwidth", o->m.drive.bandwidth_mib, "at most this many MiB/s (default: no limit)");
  sub->add_flag("--progress", o->m.drive.progress, "a progress line on stderr (memory sent / total)");
  sub->add_option("--remote-qlaunch", o->ssh.remote_qlaunch,
                  "ssh:// only: the command line that runs qlaunch on the destination (a shell command,\n"
                  "e.g. \"env QLAUNCH_STATE_DIR=/srv/qlaunch /opt/qlaunch/bin/qlaunch\")")
      ->capture_default_str()
      ->excludes("--local");
  sub->add_option("--ssh-option", o->ssh.ssh_options, "ssh:// only: passed to ssh as -o OPT (repeatable)")
      ->allow_extra_args(false)
      ->excludes("--local");
  SetKind(sub->add_option("--ssh-identity", o->ssh.identity, "ssh:// only: ssh's -i FILE"),
          ArgKind::kPath)
      ->excludes("--local");
  sub->add_option("--migrate-host", o->ssh.migrate_host,
                  "ssh:// only: the address QEMU connects to (default: the ssh URI's host), e.g. when ssh\n"
                  "goes through an alias or a jump host")
      ->excludes("--local");
  sub->add_flag("--json", o->json,
                "print {\"name\",\"uri\",\"status\",\"source_state\",\"timed_out\",\"total_time_ms\",\n"
                "\"setup_time_ms\",\"downtime_ms\",\"ram_transferred_bytes\",\"ram_total_bytes\",\"wall_ms\"};\n"
                "ssh:// adds \"destination\":{\"ssh\",\"incoming\" (where it listened),\"uri\" (what QEMU\n"
                "connected to),\"pid\",\"start_ms\" (the remote start over ssh),\"timings_ms\" (its phases)}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
