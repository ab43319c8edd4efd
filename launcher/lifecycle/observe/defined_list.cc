#include "launcher/lifecycle/observe/defined_list.h"

#include <algorithm>

#include "domain/parser.h"

namespace qlaunch::launcher {

using nlohmann::json;

void AddDefinedDomains(const DefinedDomains& defined, bool all, std::vector<DomainEntry>* domains) {
  for (DomainEntry& e : *domains) {
    e.persistent = defined.IsDefined(e.name);
    e.autostart = e.persistent && defined.Autostart(e.name);
  }
  if (!all) return;
  for (const std::string& name : defined.Names()) {
    if (std::any_of(domains->begin(), domains->end(), [&](const DomainEntry& e) { return e.name == name; })) continue;
    DomainEntry e;
    e.name = name;
    e.state = kShutOff;
    e.persistent = true;
    e.autostart = defined.Autostart(name);
    try {
      const domain::DomainDef def = domain::ParseDomainFile(defined.FileOf(name).string());
      e.memory_bytes = def.memory_bytes;
      e.vcpus = def.vcpu.current.value_or(def.vcpu.count);
    } catch (const std::exception&) {
    }
    domains->push_back(std::move(e));
  }
}

json ShutOffDomainInfo(const DefinedDomains& defined, const std::string& name) {
  const std::string file = defined.FileOf(name).string();
  if (!defined.IsDefined(name)) throw NotDefinedError(name, file);
  const domain::DomainDef def = domain::ParseDomainFile(file);
  return {{"name", name},
          {"uuid", def.uuid.empty() ? json(nullptr) : json(def.uuid)},
          {"state", kShutOff},
          {"pid", nullptr},
          {"vcpus", def.vcpu.current.value_or(def.vcpu.count)},
          {"max_vcpus", def.vcpu.count},
          {"memory_bytes", def.memory_bytes},
          {"used_memory_bytes", def.memory_bytes},
          {"persistent", true},
          {"autostart", defined.Autostart(name)},
          {"definition", file}};
}

}  // namespace qlaunch::launcher
