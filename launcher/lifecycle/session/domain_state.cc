#include "launcher/lifecycle/session/domain_state.h"

#include <array>

namespace qlaunch::launcher {

namespace {

using S = DomainState;
using V = Verb;

struct StateRow {
  const char* name;
  const char* is;    // "domain NAME <is>"
  const char* hint;  // what to do instead; "" = name the verb and what the state accepts
  std::array<S, kDomainStateCount> next;  // the states that may follow; unused slots repeat the first
  size_t next_count;
  std::array<bool, kVerbCount> accepts;  // by Verb, in its order
};

// clang-format off
// The read-only verbs (dumpxml, domblklist, domiflist, domstats, domifaddr) are accepted wherever
// a QEMU runs and its plan is recorded; `dumpxml --inactive` prints the XML as given, kept in the
// state dir from the start's pre-flight on, so in every state (shut off: a stale entry not yet
// cleaned up). The verbs that change a running domain's devices (attach-device, detach-device,
// change-media), its balloon (setmem), its vCPUs (setvcpus) or its virtio-mem devices
// (update-memory-device) act on a running or paused one only, as do migrate and save.
//                                                                                   start  destroy suspend resume reboot shutdown monitor dominfo console list  dumpxml inactive blklist iflist stats  ifaddr attach detach media setmem vcpus  vmem   migrate save
constexpr std::array<StateRow, kDomainStateCount> kTable = {{
  {"shut off", "is not running", "-",
   {S::kStarting, S::kIncoming}, 2,                                                  {true,  false,  false,  false, false, false,   false,  false,  false,  true, false,  true,    false,  false,  false,  false,  false, false, false, false, false, false, false, false}},
  {"starting", "is still being started", "try again once that start has finished",
   {S::kRunning, S::kPaused, S::kShutOff}, 3,                                        {false, false,  false,  false, false, false,   false,  false,  false,  true, false,  true,    false,  false,  false,  false,  false, false, false, false, false, false, false, false}},
  {"running", "is running", "",
   {S::kPaused, S::kShuttingDown, S::kMigrating, S::kShutOff}, 4,                    {false, true,   true,   true,  true,  true,    true,   true,   true,   true, true,   true,    true,   true,  true,  true,  true,  true,  true,  true,  true, true, true, true}},
  {"paused", "is paused", "",
   {S::kRunning, S::kShuttingDown, S::kMigrating, S::kShutOff}, 4,                   {false, true,   true,   true,  true,  true,    true,   true,   true,   true, true,   true,    true,   true,  true,  true,  true,  true,  true,  true,  true, true, true, true}},
  {"shutting down", "is shutting down", "",
   {S::kShutOff, S::kRunning}, 2,                                                    {false, true,   false,  false, false, false,   true,   true,   true,   true, true,   true,    true,   true,  true,  true,  false, false, false, false, false, false, false, false}},
  {"incoming", "is waiting for an incoming migration", "",
   {S::kRunning, S::kPaused, S::kShutOff}, 3,                                        {false, true,   false,  false, false, false,   true,   true,   false,  true, true,   true,    true,   true,  true,  true,  false, false, false, false, false, false, false, false}},
  {"migrating", "is being migrated", "",
   {S::kRunning, S::kPaused, S::kShutOff}, 3,                                        {false, true,   true,   true,  false, false,   true,   true,   true,   true, true,   true,    true,   true,  true,  true,  false, false, false, false, false, false, false, false}},
}};
// clang-format on

constexpr std::array<const char*, kVerbCount> kVerbNames = {
    "start", "destroy", "suspend", "resume", "reboot", "shutdown", "qemu-monitor-command", "dominfo", "console", "list",
    "dumpxml", "dumpxml --inactive", "domblklist", "domiflist", "domstats", "domifaddr", "attach-device",
    "detach-device", "change-media", "setmem", "setvcpus", "update-memory-device", "migrate", "save"};

const StateRow& Row(S s) { return kTable[static_cast<size_t>(s)]; }

}  // namespace

const char* StateName(DomainState s) { return Row(s).name; }
const char* VerbName(Verb v) { return kVerbNames[static_cast<size_t>(v)]; }

DomainState StateFromStatus(const DomainStatus& st) {
  switch (st.kind) {
    case DomainStatus::Kind::kStarting: return DomainState::kStarting;
    case DomainStatus::Kind::kRunning:
      if (st.migrating) return DomainState::kMigrating;
      return st.incoming ? DomainState::kIncoming : DomainState::kRunning;
    case DomainStatus::Kind::kStale: break;
  }
  return DomainState::kShutOff;
}

bool ValidTransition(DomainState from, DomainState to) {
  const StateRow& r = Row(from);
  for (size_t i = 0; i < r.next_count; ++i)
    if (r.next[i] == to) return true;
  return false;
}

bool Accepts(DomainState s, Verb v) { return Row(s).accepts[static_cast<size_t>(v)]; }

std::vector<Verb> AcceptedVerbs(DomainState s) {
  std::vector<Verb> out;
  for (size_t v = 0; v < kVerbCount; ++v)
    if (Row(s).accepts[v]) out.push_back(static_cast<Verb>(v));
  return out;
}

std::string RefusalMessage(const std::string& name, DomainState s, Verb v, const std::string& detail) {
  const StateRow& r = Row(s);
  std::string msg = "domain " + name + " " + r.is;
  if (!detail.empty()) msg += " (" + detail + ")";
  if (std::string(r.hint) == "-") return msg;
  if (*r.hint) return msg + "; " + r.hint;
  msg += std::string(": ") + VerbName(v) + " is not possible while it is " + r.name + " (it accepts ";
  const std::vector<Verb> ok = AcceptedVerbs(s);
  for (size_t i = 0; i < ok.size(); ++i) msg += (i ? ", " : "") + std::string(VerbName(ok[i]));
  return msg + ")";
}

}  // namespace qlaunch::launcher
