// The one table of a domain's states: which state may follow which, and which verbs each state
// accepts. Pure (no I/O). Every verb asks it (RunningQemu in launcher/lifecycle/session/domain_session.h,
// OpenDomainSession, start's RefuseIfRunning) instead of checking state on its own, so a verb
// in the wrong state gets one clear error, the table's.
//
//   shut off ──start──> starting ──cont──> running <──suspend/resume──> paused
//      ^  ^                 │                 │  └──shutdown──> shutting down ──┐
//      │  └──failed─────────┘                 └──migrate──> migrating ──done────┤
//      └──incoming─> incoming ──migrated──> running                            v
//   (destroy, a crash, a poweroff: any state with a QEMU ──> shut off)      shut off
//
// The state dir (launcher/host/state_dir.h) tells shut off, starting and running apart; it does
// not record paused (QEMU does), so the verbs that act on a running domain are accepted in both
// running and paused, as libvirt accepts them (suspend of a paused domain and resume of a
// running one do nothing). Incoming: `start --incoming` waits for the guest to come in;
// migrating: `migrate` is moving it away (launcher/lifecycle/move/migrate.h) or `save` into a file (save.h); shutting down is `shutdown` waiting for the guest to power off.
#pragma once

#include <string>
#include <vector>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

enum class DomainState { kShutOff, kStarting, kRunning, kPaused, kShuttingDown, kIncoming, kMigrating };
inline constexpr size_t kDomainStateCount = 7;

// The verbs that act on one domain, as the CLI names them (list acts on all, in any state).
// kDumpxmlInactive is `dumpxml --inactive`: the XML as given, which the state dir keeps.
enum class Verb {
  kStart, kDestroy, kSuspend, kResume, kReboot, kShutdown, kMonitor, kDominfo, kConsole, kList,
  kDumpxml, kDumpxmlInactive, kDomblklist, kDomiflist, kDomstats, kDomifaddr, kAttachDevice, kDetachDevice,
  kChangeMedia, kSetmem, kSetvcpus, kUpdateMemoryDevice, kMigrate, kSave
};
inline constexpr size_t kVerbCount = 24;

const char* StateName(DomainState s);  // "shut off", "starting", "running", "paused", ...
const char* VerbName(Verb v);          // "start", "destroy", ..., "qemu-monitor-command", ...

// What the state dir says (StateDir::Inspect) as a state of the table: kStarting while a start is
// at work; kIncoming for the destination of a migration not yet in (its "incoming" file, which
// SettleIncoming in domain_session.h removes once QEMU has the guest); kMigrating while a
// `migrate` of it lives; else kRunning (the state dir does not know paused), kShutOff for a stale
// entry.
DomainState StateFromStatus(const DomainStatus& st);

// May `to` follow `from`? (Not reflexive: staying in a state is no transition.)
bool ValidTransition(DomainState from, DomainState to);

bool Accepts(DomainState s, Verb v);
std::vector<Verb> AcceptedVerbs(DomainState s);

// The error of a verb the state refuses: "domain NAME <what the state is>[ (detail)]; <what to
// do>". Shut off: "domain NAME is not running". Starting: "domain NAME is still being started
// (DETAIL); try again once that start has finished". The others name the verb and what the
// state accepts. Only for a refused verb.
std::string RefusalMessage(const std::string& name, DomainState s, Verb v, const std::string& detail = "");

}  // namespace qlaunch::launcher
