#include "launcher/lifecycle/session/domain_state.h"

#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <string>

#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {
namespace {

std::vector<DomainState> AllStates() {
  std::vector<DomainState> out;
  for (size_t i = 0; i < kDomainStateCount; ++i) out.push_back(static_cast<DomainState>(i));
  return out;
}

std::vector<Verb> AllVerbs() {
  std::vector<Verb> out;
  for (size_t i = 0; i < kVerbCount; ++i) out.push_back(static_cast<Verb>(i));
  return out;
}

std::string Accepted(DomainState s) {
  std::string out;
  for (Verb v : AcceptedVerbs(s)) out += (out.empty() ? "" : " ") + std::string(VerbName(v));
  return out;
}

// The table, row by row, as a reader of docs/architecture.md sees it.
TEST(DomainState, VerbsEachStateAccepts) {
  const std::string read = " dumpxml dumpxml --inactive domblklist domiflist domstats domifaddr";
  const std::string change = " attach-device detach-device change-media setmem setvcpus update-memory-device";  // running or paused only
  const std::vector<std::pair<DomainState, std::string>> want = {
      {DomainState::kShutOff, "start list dumpxml --inactive"},
      {DomainState::kStarting, "list dumpxml --inactive"},
      {DomainState::kRunning,
       "destroy suspend resume reboot shutdown qemu-monitor-command dominfo console list" + read + change + " migrate save"},
      {DomainState::kPaused,
       "destroy suspend resume reboot shutdown qemu-monitor-command dominfo console list" + read + change + " migrate save"},
      {DomainState::kShuttingDown, "destroy qemu-monitor-command dominfo console list" + read},
      {DomainState::kIncoming, "destroy qemu-monitor-command dominfo list" + read},
      {DomainState::kMigrating, "destroy suspend resume qemu-monitor-command dominfo console list" + read},
  };
  ASSERT_EQ(want.size(), kDomainStateCount);
  for (const auto& [s, verbs] : want) EXPECT_EQ(Accepted(s), verbs) << StateName(s);
}

// The state dir's word for each state: its kind, then the migration files of a live QEMU.
TEST(DomainState, StateFromTheStateDir) {
  struct Case {
    DomainStatus::Kind kind;
    bool incoming, migrating;
    DomainState want;
  } cases[] = {
      {DomainStatus::Kind::kStale, false, false, DomainState::kShutOff},
      {DomainStatus::Kind::kStale, true, true, DomainState::kShutOff},  // a dead QEMU's files mean nothing
      {DomainStatus::Kind::kStarting, true, false, DomainState::kStarting},
      {DomainStatus::Kind::kRunning, false, false, DomainState::kRunning},
      {DomainStatus::Kind::kRunning, true, false, DomainState::kIncoming},
      {DomainStatus::Kind::kRunning, false, true, DomainState::kMigrating},
  };
  for (const Case& c : cases) {
    DomainStatus st;
    st.kind = c.kind;
    st.incoming = c.incoming;
    st.migrating = c.migrating;
    EXPECT_EQ(StateFromStatus(st), c.want) << StateName(c.want);
  }
}

TEST(DomainState, Transitions) {
  const std::vector<std::pair<DomainState, std::set<DomainState>>> want = {
      {DomainState::kShutOff, {DomainState::kStarting, DomainState::kIncoming}},
      {DomainState::kStarting, {DomainState::kRunning, DomainState::kPaused, DomainState::kShutOff}},
      {DomainState::kRunning,
       {DomainState::kPaused, DomainState::kShuttingDown, DomainState::kMigrating, DomainState::kShutOff}},
      {DomainState::kPaused,
       {DomainState::kRunning, DomainState::kShuttingDown, DomainState::kMigrating, DomainState::kShutOff}},
      {DomainState::kShuttingDown, {DomainState::kShutOff, DomainState::kRunning}},
      {DomainState::kIncoming, {DomainState::kRunning, DomainState::kPaused, DomainState::kShutOff}},
      {DomainState::kMigrating, {DomainState::kRunning, DomainState::kPaused, DomainState::kShutOff}},
  };
  for (const auto& [from, next] : want)
    for (DomainState to : AllStates())
      EXPECT_EQ(ValidTransition(from, to), next.count(to) == 1) << StateName(from) << " -> " << StateName(to);
}

// Every state is reachable from shut off, and shut off from every state: no state is a trap.
TEST(DomainState, EveryStateReachableAndLeavable) {
  auto reachable = [](DomainState from) {
    std::set<DomainState> seen{from};
    std::deque<DomainState> todo{from};
    while (!todo.empty()) {
      DomainState s = todo.front();
      todo.pop_front();
      for (DomainState t : AllStates())
        if (ValidTransition(s, t) && seen.insert(t).second) todo.push_back(t);
    }
    return seen;
  };
  EXPECT_EQ(reachable(DomainState::kShutOff).size(), kDomainStateCount);
  for (DomainState s : AllStates()) {
    EXPECT_EQ(reachable(s).count(DomainState::kShutOff), 1u) << StateName(s);
    EXPECT_FALSE(ValidTransition(s, s)) << StateName(s);
  }
}

TEST(DomainState, InvariantsOfTheTable) {
  for (DomainState s : AllStates()) {
    EXPECT_TRUE(Accepts(s, Verb::kList)) << StateName(s);  // list shows every domain
    // start only where there is no domain; destroy wherever a QEMU runs for good.
    EXPECT_EQ(Accepts(s, Verb::kStart), s == DomainState::kShutOff) << StateName(s);
    EXPECT_EQ(Accepts(s, Verb::kDestroy), s != DomainState::kShutOff && s != DomainState::kStarting) << StateName(s);
  }
  std::set<std::string> names;
  for (DomainState s : AllStates()) names.insert(StateName(s));
  for (Verb v : AllVerbs()) names.insert(VerbName(v));
  EXPECT_EQ(names.size(), kDomainStateCount + kVerbCount);
}

// The two refusals the verbs gave before the table keep their words (tests and users match them).
TEST(DomainState, RefusalsOfShutOffAndStarting) {
  EXPECT_EQ(RefusalMessage("vm1", DomainState::kShutOff, Verb::kDestroy), NotRunningError("vm1").what());
  EXPECT_EQ(RefusalMessage("vm1", DomainState::kStarting, Verb::kSuspend, "by qlaunch pid 42"),
            "domain vm1 is still being started (by qlaunch pid 42); try again once that start has finished");
}

TEST(DomainState, EveryRefusalNamesTheDomainAndState) {
  for (DomainState s : AllStates()) {
    for (Verb v : AllVerbs()) {
      if (Accepts(s, v)) continue;
      const std::string msg = RefusalMessage("vm1", s, v);
      EXPECT_EQ(msg.rfind("domain vm1 ", 0), 0u) << msg;
      if (s == DomainState::kShutOff || s == DomainState::kStarting) continue;
      EXPECT_NE(msg.find(VerbName(v)), std::string::npos) << msg;
      EXPECT_NE(msg.find(StateName(s)), std::string::npos) << msg;
      for (Verb ok : AcceptedVerbs(s)) EXPECT_NE(msg.find(VerbName(ok)), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(RefusalMessage("vm1", DomainState::kMigrating, Verb::kShutdown),
            "domain vm1 is being migrated: shutdown is not possible while it is migrating (it accepts destroy, "
            "suspend, resume, qemu-monitor-command, dominfo, console, list, dumpxml, dumpxml --inactive, domblklist, "
            "domiflist, domstats, domifaddr)");
}

// The read-only verbs: the live ones wherever a QEMU runs for good (as dominfo), the XML as given
// in every state, shut off included (a stale entry still holds it).
TEST(DomainState, ReadOnlyVerbs) {
  for (DomainState s : AllStates()) {
    for (Verb v : {Verb::kDumpxml, Verb::kDomblklist, Verb::kDomiflist, Verb::kDomstats, Verb::kDomifaddr})
      EXPECT_EQ(Accepts(s, v), Accepts(s, Verb::kDominfo)) << StateName(s) << " " << VerbName(v);
    EXPECT_TRUE(Accepts(s, Verb::kDumpxmlInactive)) << StateName(s);
  }
  EXPECT_EQ(RefusalMessage("vm1", DomainState::kShutOff, Verb::kDumpxml), "domain vm1 is not running");
}

}  // namespace
}  // namespace qlaunch::launcher
