// The three inputs every command plans from, loaded the same way everywhere:
// the domain XML (parsed + validated), the host topology, the QEMU's capabilities.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

inline constexpr const char* kDefaultEmulator = "/usr/bin/qemu-system-x86_64";

// Parses and validates; warnings are printed on stderr, errors thrown as one DiagnosticError
// listing them all.
domain::DomainDef LoadDomain(const std::string& path, bool strict = false);
// The same for XML already read (`start -`: from stdin); diagnostics name `source` ("<stdin>").
domain::DomainDef LoadDomainText(const std::string& xml, const std::string& source, bool strict = false);

// Reads the host from `sysfs` ("" = the real /sys).
numa::HostTopology LoadHost(const std::string& sysfs);

// The emulator a command should use: --qemu when given, else the domain's <emulator>, else
// the default.
std::string PickEmulator(const std::string& qemu_flag, const domain::DomainDef* def);

// Probes (cached) or, with a caps file, loads the capabilities from JSON.
qemu::QemuCaps LoadCaps(const std::string& emulator, const std::string& caps_file = "");

// $QLAUNCH_STATE_DIR or /run/qlaunch.
std::string StateRoot();

// PlanOptions for a domain as `start` would use them (QMP socket and RAM dir in its state dir).
qemu::PlanOptions DefaultPlanOptions(const std::string& name, qemu::PreallocMode mode);

std::optional<qemu::PreallocMode> ParsePreallocMode(const std::string& text);

}  // namespace qlaunch::launcher
