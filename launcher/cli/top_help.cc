#include "launcher/cli/top_help.h"

#include <cstdio>
#include <string_view>

#include "launcher/cli/reference.h"
#include "launcher/cli/verb_table.h"

namespace qlaunch::launcher {

std::string TopHelp() {
  std::string s =
      "qlaunch: start large hugepage QEMU VMs fast and NUMA-correctly, from libvirt domain XML.\n"
      "\n"
      "Usage: qlaunch COMMAND [OPTIONS] [ARGUMENTS]\n"
      "       qlaunch help COMMAND    (the same as qlaunch COMMAND --help: what it does, its options)\n"
      "       qlaunch --help | --version\n";
  std::string_view group;
  for (const VerbInfo& v : AllVerbs()) {
    if (group != v.group) {
      group = v.group;
      s += std::string("\n ") + v.group + ":\n";
    }
    char line[256];
    std::snprintf(line, sizeof line, "    %-24s%s\n", v.name, v.summary);
    s += line;
  }
  return s + "\n" + ReferenceHelp();
}

}  // namespace qlaunch::launcher
