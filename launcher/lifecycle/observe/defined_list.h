// What `list --all` and `dominfo` show of defined domains (launcher/host/defined_domains.h): the
// running ones marked persistent (and autostarted), the others shut off, as virsh shows them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launcher/host/defined_domains.h"
#include "launcher/lifecycle/observe/domain_list.h"

namespace qlaunch::launcher {

inline constexpr const char* kShutOff = "shut off";

// Marks the running `domains` that are defined (persistent, autostart); with `all`, appends the
// defined domains that do not run, in state "shut off" (pid 0), sorted by name, as virsh lists
// the inactive domains after the running ones. A definition that does not parse is listed
// without memory and vCPUs.
void AddDefinedDomains(const DefinedDomains& defined, bool all, std::vector<DomainEntry>* domains);

// dominfo's JSON of a defined domain that does not run: {"name","uuid","state":"shut off","pid":null,
// "vcpus","max_vcpus","memory_bytes","used_memory_bytes","persistent":true,"autostart","definition"}.
// Throws NotDefinedError, and DiagnosticError (file, line) for a definition that does not parse.
nlohmann::json ShutOffDomainInfo(const DefinedDomains& defined, const std::string& name);

}  // namespace qlaunch::launcher
