#include "launcher/lifecycle/observe/domain_list.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "domain/parser.h"
#include "launcher/host/process_identity.h"
#include "launcher/host/uid_lease.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

nlohmann::json ReadDevicesJson(const StateDir& state, const std::string& name) {
  std::ifstream in(state.DomainDir(name) / "devices.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::vector<DomainEntry> ListDomains(const StateDir& state, std::chrono::milliseconds qmp_timeout) {
  std::vector<DomainEntry> out;
  ReapLeases();  // with no domain dir to look up, a killed start's lease goes here
  for (const std::string& name : state.Names()) {
    const DomainStatus st = LookUpDomain(state, name, qmp_timeout);
    if (st.kind == DomainStatus::Kind::kStale) continue;  // reaped
    DomainEntry e;
    e.name = name;
    try {  // the running definition: what attach-device and setvcpus changed since the start
      domain::DomainDef def = domain::ParseDomainFile(RunningXmlPath(state.DomainDir(name)).string());
      e.memory_bytes = def.memory_bytes;
      e.vcpus = def.vcpu.current.value_or(def.vcpu.count);
    } catch (const std::exception&) {
    }
    e.devices = ReadDevicesJson(state, name);
    e.pid = st.qemu_alive ? st.qemu->pid : 0;
    if (e.pid > 0) e.identity = ProcessIdentity(e.pid);
    if (st.kind == DomainStatus::Kind::kStarting) e.state = "starting";
    else if (st.kind != DomainStatus::Kind::kRunning) continue;
    else if (st.migrating) e.state = "migrating";  // `migrate` holds its QMP socket
    else e.state = ShownStatus(QueryStatus((state.DomainDir(name) / "qmp.sock").string(), qmp_timeout));
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::json ToJson(const std::vector<DomainEntry>& domains) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& d : domains) {
    nlohmann::json pid = d.pid > 0 ? nlohmann::json(d.pid) : nlohmann::json(nullptr);
    arr.push_back({{"name", d.name}, {"pid", pid}, {"state", d.state}, {"memory_bytes", d.memory_bytes}, {"vcpus", d.vcpus},
                   {"graphics", d.devices.value("graphics", nlohmann::json::array())},
                   {"interfaces", d.devices.value("interfaces", nlohmann::json::array())},
                   {"persistent", d.persistent}, {"autostart", d.autostart}});
    for (auto& [key, value] : d.identity.items()) arr.back()[key] = value;
  }
  return arr;
}

std::string ToTable(const std::vector<DomainEntry>& domains) {
  size_t width = 4;
  for (const auto& d : domains) width = std::max(width, d.name.size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, " %-8s %-*s  %-10s %10s  %s\n", "Pid", static_cast<int>(width), "Name", "State",
                "Memory", "vCPUs");
  out += line;
  out += std::string(width + 42, '-') + "\n";
  for (const auto& d : domains) {
    std::string pid = d.pid > 0 ? std::to_string(d.pid) : "-";
    std::string mem = d.memory_bytes ? std::to_string(d.memory_bytes >> 20) + " MiB" : "-";
    std::string vcpus = d.vcpus ? std::to_string(d.vcpus) : "-";
    std::snprintf(line, sizeof line, " %-8s %-*s  %-10s %10s  %s\n", pid.c_str(), static_cast<int>(width),
                  d.name.c_str(), d.state.c_str(), mem.c_str(), vcpus.c_str());
    out += line;
  }
  return out;
}

}  // namespace qlaunch::launcher
