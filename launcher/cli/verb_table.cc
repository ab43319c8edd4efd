#include "launcher/cli/verb_table.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace qlaunch::launcher {

namespace {

constexpr const char* kManagement = "Domain Management";
constexpr const char* kMonitoring = "Domain Monitoring";
constexpr const char* kHost = "Host and Hypervisor";
constexpr const char* kItself = "qlaunch itself";

constexpr VerbInfo kVerbs[] = {
    {"attach-device", kManagement, "attach a device from an XML file to a running domain", AddAttachDeviceCommand},
    {"autostart", kManagement, "start a defined domain at boot (systemd's qlaunch@.service)", AddAutostartCommand},
    {"change-media", kManagement, "eject, insert or change a running domain's cdrom medium", AddChangeMediaCommand},
    {"console", kManagement, "attach the terminal to a running domain's serial console", AddConsoleCommand},
    {"define", kManagement, "define a domain from a domain XML, to start it by name", AddDefineCommand},
    {"destroy", kManagement, "stop a domain at once and release what it held", AddDestroyCommand},
    {"detach-device", kManagement, "detach the device an XML file names from a running domain",
     AddDetachDeviceCommand},
    {"domxml-to-native", kManagement, "print the QEMU command line for a domain XML", AddDomxmlToNativeCommand},
    {"dumpxml", kManagement, "print a running domain's live XML, or a defined domain's XML", AddDumpxmlCommand},
    {"edit", kManagement, "edit a defined domain's XML in $EDITOR", AddEditCommand},
    {"migrate", kManagement, "move a running domain to another host (or another QEMU)", AddMigrateCommand},
    {"qemu-monitor-command", kManagement, "send one QMP or HMP command to a domain's QEMU", AddMonitorCommand},
    {"reboot", kManagement, "reset a domain (its reset button)", AddLifecycleCommands},
    {"restore", kManagement, "run a domain again from a file `save` wrote", AddRestoreCommand},
    {"resume", kManagement, "run a suspended domain's vCPUs again", AddLifecycleCommands},
    {"run", kManagement, "start a domain and supervise it in the foreground", AddRunCommand},
    {"save", kManagement, "save a domain's state and memory to a file and stop it", AddSaveCommand},
    {"setmem", kManagement, "set a running domain's balloon target", AddSetmemCommand},
    {"setvcpus", kManagement, "plug or unplug vCPUs of a running domain", AddSetvcpusCommand},
    {"shutdown", kManagement, "ask a domain's guest to power off, and wait", AddLifecycleCommands},
    {"start", kManagement, "start a domain from a domain XML (virsh create) or its definition", AddStartCommand},
    {"suspend", kManagement, "pause a running domain's vCPUs", AddLifecycleCommands},
    {"undefine", kManagement, "remove a defined domain's definition", AddUndefineCommand},
    {"update-memory-device", kManagement, "resize a running domain's virtio-mem device", AddUpdateMemoryDeviceCommand},
    {"validate", kManagement, "check a domain XML against its rules and this host", AddValidateCommand},
    {"domblklist", kMonitoring, "list a running domain's disks", AddDomblklistCommand},
    {"domifaddr", kMonitoring, "list a running domain's IP addresses", AddDomifaddrCommand},
    {"domiflist", kMonitoring, "list a running domain's network interfaces", AddDomiflistCommand},
    {"dominfo", kMonitoring, "show a domain (running: with its memory per host node)", AddDominfoCommand},
    {"domstats", kMonitoring, "show a running domain's statistics", AddDomstatsCommand},
    {"list", kMonitoring, "list the running domains (--all: also the defined ones shut off)", AddListCommand},
    {"bench", kHost, "time qlaunch start against virsh create and plain QEMU", AddBenchCommand},
    {"capabilities", kHost, "show the host's NUMA nodes and hugepages, and QEMU's features", AddCapabilitiesCommand},
    {"pool", kHost, "keep hugepages filled and zeroed for the next starts (the warm pool)", AddPoolCommand},
    {"prealloc", kHost, "run qlaunch's NUMA-pinned preallocator alone", AddPreallocCommand},
    {"completion", kItself, "print the bash completion script", AddCompletionCommand},
    {"help", kItself, "print help: the commands, or one command's options", AddHelpCommand},
};

// Optimal string alignment distance: insertions, deletions, substitutions and the swap of two
// neighbours ("strat" for "start") each cost 1.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::span<const VerbInfo> AllVerbs() { return kVerbs; }

const VerbInfo* FindVerb(std::string_view name) {
  for (const VerbInfo& v : kVerbs)
    if (name == v.name) return &v;
  return nullptr;
}

std::string ClosestVerb(std::string_view word) {
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // The start of exactly one verb ("upd", "capa") is what was meant.
  const VerbInfo* prefix_of = nullptr;
  int prefixes = 0;
  for (const VerbInfo& v : kVerbs)
    if (lower.size() >= 3 && std::string_view(v.name).starts_with(lower)) prefix_of = &v, ++prefixes;
  if (prefixes == 1) return prefix_of->name;
  const VerbInfo* best = nullptr;
  size_t best_distance = 0;
  for (const VerbInfo& v : kVerbs) {
    const size_t d = Distance(lower, v.name);
    if (!best || d < best_distance) best = &v, best_distance = d;
  }
  // Close enough: at most a third of the word wrong (at least one letter, at most three).
  const size_t allowed = std::clamp<size_t>(lower.size() / 3, 1, 3);
  return best && best_distance <= allowed ? best->name : "";
}

}  // namespace qlaunch::launcher
