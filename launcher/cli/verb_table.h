// Every verb of qlaunch in one table: its name, the group `qlaunch --help` lists it under (as
// virsh groups its commands), its one-line summary, and the function that adds it to the CLI11
// tree (the lifecycle verbs share one). The whole tree, `qlaunch --help`, the unknown-verb
// suggestion and the completion of `help COMMAND` all read it.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "launcher/cli/command.h"

namespace qlaunch::launcher {

struct VerbInfo {
  const char* name;
  const char* group;    // "Domain Management", "Domain Monitoring", "Host and Hypervisor", "qlaunch itself"
  const char* summary;  // one line, lower case, no full stop (as virsh's)
  void (*add)(CLI::App&, CommandAction*);
};

// In the order of `qlaunch --help`: group by group, each group's verbs alphabetically.
std::span<const VerbInfo> AllVerbs();

// nullptr for a word that is no verb.
const VerbInfo* FindVerb(std::string_view name);

// The verb closest to a mistyped word (edit distance, a swap of two letters counting once), or ""
// when none is close enough to be what was meant.
std::string ClosestVerb(std::string_view word);

}  // namespace qlaunch::launcher
