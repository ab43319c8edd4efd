// StartDomain: `qlaunch start`, from domain XML to a running guest.
//
//   parse -> topology -> probe -> plan -> pre-flight (hugepage pools, /dev/kvm; nothing has
//   been created yet) -> claim <state>/<name>/ -> mem-path dirs -> launcher memfds, their workers start filling
//   them -> spawn QEMU paused (-S) (the filling goes on meanwhile) -> QMP greeting ->
//   qmp_capabilities (its reply: QEMU's own start-up preallocation is done) -> widen QEMU's
//   affinity if it was narrowed -> launcher population done -> object-del every
//   thread-context -> cont (qlaunch's mappings released meanwhile) -> QEMU says running (RESUME,
//   else query-status). With --run-early (launcher/lifecycle/start/run_early.h)
//   the launcher's population is waited for after cont instead, with the guest running.
//
// With --incoming, QEMU waits for the migration instead of cont (StartOptions::incoming).
//
// Every resource is held by an RAII guard that is disarmed only when the guest runs: on any
// failure, and on SIGINT/SIGTERM (StartInterrupt), QEMU is killed and reaped, the memfds are
// unmapped and closed, mem-path dirs and the state dir are removed, so every hugepage returns.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "launcher/lifecycle/start/timings.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// $QLAUNCH_QMP_TIMEOUT_MS when set (a positive integer), else 30 s. Bounds waiting for QMP's
// socket and greeting and each QMP command. Where QEMU preallocates, the greeting and the
// reply to qmp_capabilities wait for that too: they get 2 ms more per MiB QEMU preallocates.
std::chrono::milliseconds QmpTimeoutFromEnv();

struct StartOptions {
  std::string domain_xml;  // a path, or "-": the XML on stdin (diagnostics name "<stdin>")
  // The XML itself, already read (restore: from the save file's header); domain_xml then only names
  // where it came from, in diagnostics. nullopt: read domain_xml (or stdin for "-").
  std::optional<std::string> domain_xml_text;
  std::string qemu;   // --qemu; "" = the domain's <emulator>, else /usr/bin/qemu-system-x86_64
  qemu::PreallocMode prealloc = qemu::PreallocMode::kAuto;
  std::string sysfs;  // "" = the real /sys
  std::filesystem::path state_root;  // "" = DefaultStateRoot()
  std::chrono::milliseconds qmp_timeout{0};  // 0 = QmpTimeoutFromEnv()
  bool progress = false;  // a progress line on stderr while memory is preallocated
  std::string user;       // --user USER[:GROUP]; "" = the domain's DAC <seclabel>, else qlaunch-qemu
  bool supervised = false;  // for `qlaunch run`: QEMU stays after a guest poweroff (-no-shutdown)
  bool run_early = false;   // --run-early: cont as soon as QEMU is ready, fill memory behind the guest
  // --incoming URI: the destination of a migration (migration_uri.h). Memory is planned and filled
  // as for a start, QEMU spawned with `-incoming defer`, then migrate-incoming (incoming.h); the
  // start returns once QEMU listens, the domain in state incoming (its "incoming" file).
  std::string incoming;
  // Internal (`restore`, restore.h): the stream comes from this fd, positioned where it starts; QEMU
  // gets it with `getfd` and migrate-incoming "fd:qlaunch-restore". Excludes `incoming`.
  int incoming_fd = -1;
  bool ignore_shared = false;  // with incoming: x-ignore-shared (`migrate --local`: RAM stays where it is)
};

// Throws DiagnosticError for bad input or a host that cannot run the domain (before anything
// is created), AlreadyRunningError, or std::runtime_error for failures while starting (with
// the tail of qemu.log when QEMU exited, "interrupted by SIGINT" when signalled).
StartReport StartDomain(const StartOptions& opts);

}  // namespace qlaunch::launcher
