// ListDomains: the domains in the state directory, with their state as QEMU reports it
// (QMP query-status). Each is looked up through the one door (session/domain_session.h
// LookUpDomain): entries whose QEMU is gone are reaped on the way and not listed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

struct DomainEntry {
  std::string name;
  pid_t pid = 0;      // QEMU's pid; 0 while a start has not spawned it yet
  std::string state;  // query-status "status" (running, paused, ...); "starting" while a
                      // `qlaunch start` is still at work; "unknown" when QMP does not answer
  uint64_t memory_bytes = 0;  // from its domain.xml; 0 when unknown
  unsigned vcpus = 0;
  // What its devices got on the host (the state's devices.json, launcher/host/device_host.h):
  // [{"type","listen","port"}] and [{"type","model","mac","tap","bridge"}]; empty when none.
  nlohmann::json devices = nlohmann::json::object();
  bool persistent = false;  // defined (launcher/lifecycle/observe/defined_list.h)
  bool autostart = false;
  // QEMU's uid, gid, leased, namespaces (host/process_identity.h); empty before it is spawned.
  nlohmann::json identity = nlohmann::json::object();
};

// The state's devices.json of a domain: {"graphics": [...], "interfaces": [...]} (each absent
// when the domain has none); {} when the file is missing or unreadable.
nlohmann::json ReadDevicesJson(const StateDir& state, const std::string& name);

// qmp_timeout bounds the QMP exchange with each domain.
std::vector<DomainEntry> ListDomains(const StateDir& state, std::chrono::milliseconds qmp_timeout);

// [{"name", "pid", "state", "memory_bytes", "vcpus", "graphics", "interfaces", "persistent",
// "autostart"}, ...]; pid is null while unknown (and for a shut-off domain).
nlohmann::json ToJson(const std::vector<DomainEntry>& domains);
// " Pid  Name  State  Memory  vCPUs" like `virsh list` (with dominfo's two columns).
std::string ToTable(const std::vector<DomainEntry>& domains);

}  // namespace qlaunch::launcher
