// qlaunch dominfo: what a running domain is and where its memory sits, like `virsh dominfo`.
#include <cstdio>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "domain/parser.h"
#include "launcher/cli/command.h"
#include "launcher/lifecycle/destroy.h"
#include "launcher/lifecycle/domain_list.h"
#include "launcher/lifecycle/numa_maps.h"
#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

namespace {

using nlohmann::json;

struct Options {
  std::string name;
  bool json = false;
};

std::string Slurp(const std::filesystem::path& p) { return ReadSmallFile(p).value_or(""); }

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

json Info(const StateDir& state, const std::string& name) {
  const ProcessRef qemu = RunningQemu(state, name, Verb::kDominfo);
  const auto dir = state.DomainDir(name);
  domain::DomainDef def = domain::ParseDomainFile((dir / "domain.xml").string());
  json plan = json::parse(Slurp(dir / "plan.json"), nullptr, false);
  json out = {{"name", name},
              {"uuid", def.uuid.empty() ? json(nullptr) : json(def.uuid)},
              {"state", QueryStatus((dir / "qmp.sock").string(), std::chrono::seconds(5))},
              {"pid", qemu.pid},
              {"user", Trimmed(Slurp(dir / "user"))},
              {"vcpus", def.vcpu.count},
              {"memory_bytes", def.memory_bytes},
              {"graphics", json::array()},
              {"interfaces", json::array()}};
  json devices = ReadDevicesJson(state, name);
  out["graphics"] = devices.value("graphics", json::array());
  out["interfaces"] = devices.value("interfaces", json::array());
  std::set<uint64_t> page_sizes;
  std::set<std::string> prealloc;
  std::vector<BackendRef> refs;
  json backends = json::array();
  json planned = json::object();
  for (const json& b : plan.value("backends", json::array())) {
    std::vector<unsigned> nodes = b.value("host_nodes", std::vector<unsigned>{});
    BackendRef r{b.value("id", ""), b.value("size_bytes", uint64_t{0}), b.value("page_size_bytes", uint64_t{0}),
                 nodes.empty() ? "" : IdSet(nodes).ToString()};
    refs.push_back(r);
    page_sizes.insert(r.page_bytes);
    prealloc.insert(b.value("prealloc", "none"));
    // Where the plan put it: on its host node, or spread over its nodes ("0-1"), or unbound ("any").
    std::string key = nodes.empty() ? "any" : std::to_string(nodes.front());
    if (nodes.size() > 1) key = IdSet(nodes).ToString();
    planned[key] = planned.value(key, uint64_t{0}) + r.size_bytes;
    backends.push_back({{"id", r.id}, {"size_bytes", r.size_bytes}, {"host_nodes", nodes},
                        {"policy", b.value("policy", "")}, {"page_size_bytes", b.value("page_size_bytes", uint64_t{0})},
                        {"prealloc", b.value("prealloc", "none")}});
  }
  const std::string proc = "/proc/" + std::to_string(qemu.pid);
  auto matched = MatchBackends(ParseNumaMaps(Slurp(proc + "/maps"), Slurp(proc + "/numa_maps")), refs);
  json by_node = json::object();
  for (json& b : backends) {
    json mine = json::object();
    if (auto it = matched.find(b["id"].get<std::string>()); it != matched.end())
      for (auto [node, bytes] : it->second.bytes_by_node) {
        mine[std::to_string(node)] = bytes;
        by_node[std::to_string(node)] = by_node.value(std::to_string(node), uint64_t{0}) + bytes;
      }
    b["memory_by_node"] = mine;
  }
  out["page_sizes"] = page_sizes;
  out["prealloc"] = prealloc.count("launcher") ? "launcher" : prealloc.count("qemu") ? "qemu" : "none";
  out["memory_by_node"] = by_node;
  out["planned_by_node"] = planned;
  out["backends"] = backends;
  return out;
}

std::string Bytes(uint64_t b) { return std::to_string(b >> 20) + " MiB"; }

int Run(const Options& o) {
  StateDir state;
  json info = Info(state, o.name);
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
  row("vCPUs:", std::to_string(info["vcpus"].get<unsigned>()));
  row("Memory:", Bytes(info["memory_bytes"]));
  std::string sizes;
  for (uint64_t s : info["page_sizes"]) sizes += (sizes.empty() ? "" : ", ") + (s ? Bytes(s) : std::string("4 KiB"));
  row("Page sizes:", sizes);
  row("Preallocation:", info["prealloc"]);
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
      "who preallocated, and where its guest memory sits per host node right now (QEMU's\n"
      "/proc/PID/numa_maps: the pages mapped in QEMU, all of them once QEMU preallocated; after\n"
      "qlaunch's own preallocation only what the guest has touched) next to where the plan put it;\n"
      "its graphics (listen address, port) and interfaces (MAC, model, tap, bridge).\n"
      "Example: qlaunch dominfo --json two-cells");
  sub->add_option("NAME", o->name, "the domain's <name>")->required();
  sub->add_flag("--json", o->json,
                "print {\"name\",\"state\",\"pid\",\"user\",\"vcpus\",\"memory_bytes\",\"page_sizes\",\"prealloc\",\n"
                "\"memory_by_node\":{\"<node>\":bytes},\"planned_by_node\",\"backends\":[...]}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
