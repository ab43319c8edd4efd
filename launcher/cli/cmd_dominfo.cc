// qlaunch dominfo: what a running domain is and where its memory sits, like `virsh dominfo`.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/defined_domains.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/defined_list.h"
#include "launcher/lifecycle/observe/domain_info.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

namespace {

using nlohmann::json;

struct Options {
  std::string name;
  bool json = false;
};

std::string Bytes(uint64_t b) { return std::to_string(b >> 20) + " MiB"; }

void PrintShutOff(const json& info) {
  auto row = [](const char* k, const std::string& v) { std::printf("%-17s %s\n", k, v.c_str()); };
  row("Name:", info["name"]);
  row("UUID:", info["uuid"].is_null() ? "-" : info["uuid"].get<std::string>());
  row("State:", info["state"]);
  row("Pid:", "-");
  row("CPU(s):", std::to_string(info["vcpus"].get<unsigned>()));
  row("Max CPU(s):", std::to_string(info["max_vcpus"].get<unsigned>()));
  row("Max memory:", Bytes(info["memory_bytes"]));
  row("Used memory:", Bytes(info["used_memory_bytes"]));
  row("Persistent:", "yes");
  row("Autostart:", info["autostart"] ? "enable" : "disable");
  row("Definition:", info["definition"]);
}

int Run(const Options& o) {
  StateDir state;
  DefinedDomains defined;
  json info;
  try {
    info = DomainInfo(state, o.name);
  } catch (const NotRunningError&) {
    if (!defined.IsDefined(o.name)) throw;
    info = ShutOffDomainInfo(defined, o.name);  // as virsh: Id -, State shut off
    if (o.json) std::printf("%s\n", info.dump().c_str());
    else PrintShutOff(info);
    return 0;
  }
  info["persistent"] = defined.IsDefined(o.name);
  info["autostart"] = defined.Autostart(o.name);
  if (o.json) {
    std::printf("%s\n", info.dump().c_str());
    return 0;
  }
  auto row = [](const char* k, const std::string& v) { std::printf("%-17s %s\n", k, v.c_str()); };
  row("Name:", info["name"]);
  row("UUID:", info["uuid"].is_null() ? "-" : info["uuid"].get<std::string>());
  row("State:", info["state"]);
  row("Pid:", std::to_string(info["pid"].get<int>()));
  row("User:", info["user"]);
  row("CPU(s):", std::to_string(info["vcpus"].get<unsigned>()));
  row("Max CPU(s):", std::to_string(info["max_vcpus"].get<unsigned>()));
  row("Max memory:", Bytes(info["memory_bytes"]));
  row("Used memory:", Bytes(info["used_memory_bytes"]));
  for (const json& m : info["virtio_mem"])
    row("virtio-mem:", m["alias"].get<std::string>() + " (node " + std::to_string(m["node"].get<unsigned>()) + "): " +
                           (m["plugged_bytes"].is_null() ? std::string("?") : Bytes(m["plugged_bytes"])) + " plugged of " +
                           Bytes(m["size_bytes"]) + ", " + Bytes(m["requested_bytes"]) + " requested");
  std::string sizes;
  for (uint64_t s : info["page_sizes"]) sizes += (sizes.empty() ? "" : ", ") + (s ? Bytes(s) : std::string("4 KiB"));
  row("Page sizes:", sizes);
  row("Preallocation:", info["prealloc"]);
  row("Persistent:", info["persistent"] ? "yes" : "no");
  row("Autostart:", info["autostart"] ? "enable" : "disable");
  for (const json& g : info["graphics"])
    row("Graphics:", g.value("type", "") + " " + g.value("listen", "") + ":" + std::to_string(g.value("port", 0)));
  for (const json& n : info["interfaces"]) {
    std::string where = n.value("tap", "").empty() ? "" : ", tap " + n.value("tap", "");
    if (!n.value("bridge", "").empty()) where += " on " + n.value("bridge", "");
    row("Interface:", n.value("mac", "") + " " + n.value("model", "") + " (" + n.value("type", "") + where + ")");
  }
  for (const auto& [what, key] : {std::pair{"Planned on:", "planned_by_node"}, {"Resident on:", "memory_by_node"}}) {
    std::string s;
    for (auto it = info[key].begin(); it != info[key].end(); ++it)
      s += (s.empty() ? "" : ", ") + (it.key() == "any" ? std::string("unbound") : "node " + it.key()) + ": " +
           Bytes(it.value());
    row(what, s.empty() ? "-" : s);
  }
  return 0;
}

}  // namespace

void AddDominfoCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "dominfo",
      "Show a running domain like `virsh dominfo`: state, pid, QEMU's user, vCPUs, memory, page sizes,\n"
      "who preallocated, and where its guest memory sits per host node right now next to where the\n"
      "plan put it: for a memfd or hugetlbfs file (as root), every page the file holds, read from\n"
      "the file through /proc/PID/map_files; else the pages in QEMU's page tables (numa_maps),\n"
      "which after qlaunch's own preallocation are only what the guest has touched;\n"
      "its graphics (listen address, port) and interfaces (MAC, model, tap, bridge); for each virtio-mem\n"
      "device, what the guest has plugged and what it was asked to (update-memory-device); whether it\n"
      "is defined (Persistent) and autostarted. A defined domain that does not run: 'shut off', its\n"
      "vCPUs and memory from its definition, as virsh shows an inactive domain.\n"
      "Example: qlaunch dominfo --json two-cells");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_flag("--json", o->json,
                "print {\"name\",\"state\",\"pid\",\"user\",\"vcpus\" (running),\"max_vcpus\",\"memory_bytes\",\"used_memory_bytes\" (the balloon's\n"
                "actual),\"virtio_mem\":[{\"alias\",\"node\",\"size_bytes\",\"requested_bytes\",\"plugged_bytes\"}],\"page_sizes\",\"prealloc\",\n"
                "\"memory_by_node\":{\"<node>\":bytes},\"planned_by_node\",\"backends\":[{...,\"memory_source\":\n"
                "\"backing\"|\"qemu-mapped\"}],\"persistent\",\"autostart\"}; shut off: {\"name\",\"uuid\",\"state\",\"pid\":null,\"vcpus\",\n"
                "\"max_vcpus\",\"memory_bytes\",\"used_memory_bytes\",\"persistent\",\"autostart\",\"definition\"}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
