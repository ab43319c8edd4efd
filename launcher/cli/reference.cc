#include "launcher/cli/reference.h"

#include <cstdio>
#include <stdexcept>

#include "launcher/lifecycle/supervise/supervise.h"

namespace qlaunch::launcher {

namespace {

constexpr ExitStatusInfo kExitStatuses[] = {
    {0, "", "success"},
    {1, "", "an error: what went wrong is printed on standard error (FILE:LINE: error: ... for a domain XML)"},
    {2, "",
     "a usage error: an unknown command or option, a missing or malformed argument, options that exclude each "
     "other"},
    {3, "detach-device", "the guest has not released the device in time: it stays attached"},
    {kRunPoweredOff, "run", "the guest powered off (also after a SIGTERM it answered in time)"},
    {kRunCrashed, "run", "the guest crashed and <on_crash> destroyed it"},
    {kRunTimedOut, "run", "destroyed after --shutdown-timeout (SIGTERM/SIGINT, the guest did not power off)"},
    {kRunQemuDied, "run", "QEMU ended by itself or was destroyed by someone else"},
    {kRunMigrated, "run", "the domain migrated away (qlaunch migrate): it runs elsewhere now"},
};

constexpr EnvironmentInfo kEnvironment[] = {
    {"QLAUNCH_STATE_DIR", "where running domains keep their state (default /run/qlaunch)"},
    {"QLAUNCH_CONFIG_DIR", "where defined domains are kept (default /etc/qlaunch/domains; define, start NAME)"},
    {"QLAUNCH_CACHE_DIR", "the QEMU capability cache (default $XDG_CACHE_HOME/qlaunch, else ~/.cache/qlaunch)"},
    {"XDG_CACHE_HOME", "see QLAUNCH_CACHE_DIR"},
    {"QLAUNCH_QMP_TIMEOUT_MS", "how long start waits for QEMU's QMP answers (default 30000; list waits at most 5000)"},
    {"QLAUNCH_KVM_DEVICE", "the KVM device qlaunch judges the host by (default /dev/kvm)"},
    {"QLAUNCH_UID_RANGE", "the uids (and gids) leased to domains, FIRST-LAST (default 2100000000-2100009999)"},
    {"QLAUNCH_UID_LEASES", "the host-wide registry of leased uids (default /run/qlaunch-uids)"},
    {"QLAUNCH_ISOLATION", "off: every domain's QEMU runs as qlaunch-qemu, no ids or mount namespace of its own"},
    {"NOTIFY_SOCKET", "run: where READY=1 goes once the guest runs (systemd Type=notify)"},
    {"QLAUNCH_FAULT", "testing aid: preflight, spawn, qmp, prealloc, cont or running makes start fail at that phase"},
    {"QLAUNCH_POOL_DIR", "the warm pool's directory name under each hugetlbfs mount (default qlaunch-pool)"},
    {"QLAUNCH_POOL_FAULT",
     "testing aid: clean-early, scrub-stall, trust-stale, fill-stall or claim-stall breaks the warm pool there"},
    {"QLAUNCH_POOL_TARGETS", "where the warm pool's targets are kept (default /etc/qlaunch/pool-targets)"},
    {"QLAUNCH_HOTPLUG_FAULT",
     "testing aid: device_add, qemu-dies or crash makes attach-device, detach-device or change-media fail there"},
};

constexpr FileInfo kFiles[] = {
    {"$QLAUNCH_STATE_DIR/NAME/", "a domain's state directory (mode 0700), from its start until it is gone"},
    {"$QLAUNCH_STATE_DIR/NAME/pid", "QEMU's pid (pid.start: its start time, against pid reuse)"},
    {"$QLAUNCH_STATE_DIR/NAME/qmp.sock", "QEMU's QMP socket"},
    {"$QLAUNCH_STATE_DIR/NAME/qemu.log", "what QEMU writes on its standard output and error"},
    {"$QLAUNCH_STATE_DIR/NAME/domain.xml", "the XML as given to start (dumpxml --inactive)"},
    {"$QLAUNCH_STATE_DIR/NAME/running.xml", "the running definition: devices attached or detached since"},
    {"$QLAUNCH_STATE_DIR/NAME/plan.json",
     "the plan it was started with: argv, backends, devices with ids and PCI addresses"},
    {"$QLAUNCH_STATE_DIR/NAME/devices.json", "taps and VNC/SPICE ports made for it"},
    {"$QLAUNCH_STATE_DIR/NAME/labels.json", "the files given to QEMU's user, to give back"},
    {"$QLAUNCH_STATE_DIR/NAME/lease", "the uid and gid leased to it, and the shared groups of files it uses"},
    {"$QLAUNCH_STATE_DIR/NAME/channel/", "the sockets of channels without a path (the guest agent's)"},
    {"$QLAUNCH_CONFIG_DIR/NAME.xml", "a defined domain's XML (define, edit; mode 0600 in a root-only directory)"},
    {"$QLAUNCH_CONFIG_DIR/autostart/NAME.xml", "a defined domain marked for autostart (a link to ../NAME.xml)"},
    {"$QLAUNCH_STATE_DIR/NAME/pool", "the warm pool files the domain took (dirty once it ends)"},
    {"/etc/qlaunch/pool-targets/POOL/NAME.json", "a warm target: the sets of domain NAME the pool keeps (pool target)"},
    {"HUGETLBFS/qlaunch-pool/", "the warm pool (mode 0700): STATE.nNODE.BYTES.SERIAL, STATE warm, use, dirty, scrub or fill"},
    {"/var/lib/qlaunch/nvram/NAME_VARS.fd", "a UEFI domain's variables, kept across starts"},
    {"$QLAUNCH_CACHE_DIR/", "QEMU capabilities, one file per QEMU binary, renewed when the binary changes"},
};

std::string Printf(const char* fmt, const std::string& a, const std::string& b) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, a.c_str(), b.c_str());
  return buf;
}

std::string ExitMeaning(const ExitStatusInfo& e) {
  return *e.verb ? std::string(e.verb) + ": " + e.meaning : std::string(e.meaning);
}

}  // namespace

std::span<const ExitStatusInfo> ExitStatuses() { return kExitStatuses; }
std::span<const EnvironmentInfo> EnvironmentVariables() { return kEnvironment; }
std::span<const FileInfo> StateFiles() { return kFiles; }

bool IsExitStatusOf(int code, const std::string& verb) {
  for (const ExitStatusInfo& e : kExitStatuses)
    if (e.code == code && (!*e.verb || verb == e.verb)) return true;
  return false;
}

std::string VerbExitStatusHelp(const std::string& verb) {
  std::string s = "Exit status:";
  for (const ExitStatusInfo& e : kExitStatuses) {
    bool own = false;  // the verb's own meaning of a shared status replaces it
    for (const ExitStatusInfo& o : kExitStatuses) own |= !*e.verb && o.code == e.code && verb == o.verb;
    if ((!*e.verb && !own) || verb == e.verb) s += "\n  " + std::to_string(e.code) + "  " + e.meaning;
  }
  return s;
}

std::string ReferenceHelp() {
  std::string s = "Exit status:\n";
  for (const ExitStatusInfo& e : kExitStatuses) s += Printf("    %-3s  %s\n", std::to_string(e.code), ExitMeaning(e));
  s += "\nEnvironment:\n";
  for (const EnvironmentInfo& e : kEnvironment) s += Printf("    %-24s  %s\n", e.name, e.meaning);
  s += "\nFiles:\n";
  for (const FileInfo& f : kFiles) s += Printf("    %-36s  %s\n", f.path, f.meaning);
  return s;
}

std::string ReferenceMarkdown(const std::string& section) {
  std::string s;
  auto cell = [](std::string text) {  // a | inside a cell would end it; <element> is code, not HTML
    for (size_t at = 0; (at = text.find('|', at)) != std::string::npos; at += 2) text.replace(at, 1, "\\|");
    for (size_t at = 0; (at = text.find('<', at)) != std::string::npos;) {
      const size_t end = text.find('>', at);
      if (end == std::string::npos) break;
      text.insert(end + 1, "`");
      text.insert(at, "`");
      at = end + 3;
    }
    return text;
  };
  if (section == "exit-status") {
    s = "| status | command | meaning |\n| --- | --- | --- |\n";
    for (const ExitStatusInfo& e : kExitStatuses)
      s += "| " + std::to_string(e.code) + " | " + (*e.verb ? std::string("`") + e.verb + "`" : "every command") +
           " | " + cell(e.meaning) + " |\n";
  } else if (section == "environment") {
    s = "| variable | meaning |\n| --- | --- |\n";
    for (const EnvironmentInfo& e : kEnvironment) s += std::string("| `") + e.name + "` | " + cell(e.meaning) + " |\n";
  } else if (section == "files") {
    s = "| file | what it holds |\n| --- | --- |\n";
    for (const FileInfo& f : kFiles) s += std::string("| `") + f.path + "` | " + cell(f.meaning) + " |\n";
  } else {
    throw std::invalid_argument("ReferenceMarkdown: no section " + section);
  }
  return s;
}

}  // namespace qlaunch::launcher
