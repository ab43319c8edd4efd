#include "launcher/lifecycle/start/inputs.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "domain/parser.h"
#include "domain/validate.h"
#include "qemu_cmd/caps_probe.h"

namespace qlaunch::launcher {

namespace {

domain::DomainDef Validated(domain::DomainDef def) {
  for (const auto& w : def.warnings) std::fprintf(stderr, "%s\n", w.ToString().c_str());
  auto problems = domain::ValidateDomain(def);
  if (HasErrors(problems)) throw DiagnosticError(std::move(problems));
  for (const auto& w : problems) std::fprintf(stderr, "%s\n", w.ToString().c_str());
  return def;
}

}  // namespace

domain::DomainDef LoadDomain(const std::string& path, bool strict) {
  domain::ParseOptions opts;
  opts.strict = strict;
  return Validated(domain::ParseDomainFile(path, opts));
}

domain::DomainDef LoadDomainText(const std::string& xml, const std::string& source, bool strict) {
  domain::ParseOptions opts;
  opts.strict = strict;
  return Validated(domain::ParseDomainXml(xml, source, opts));
}

numa::HostTopology LoadHost(const std::string& sysfs) {
  numa::ReadOptions opts;
  if (!sysfs.empty()) opts.sysfs_root = sysfs;
  return numa::ReadHostTopology(opts);
}

std::string PickEmulator(const std::string& qemu_flag, const domain::DomainDef* def) {
  if (!qemu_flag.empty()) return qemu_flag;
  if (def && !def->devices.emulator.empty()) return def->devices.emulator;
  return kDefaultEmulator;
}

qemu::QemuCaps LoadCaps(const std::string& emulator, const std::string& caps_file) {
  if (caps_file.empty()) return qemu::ProbeCaps(emulator);
  std::ifstream in(caps_file);
  if (!in) throw std::runtime_error("cannot read capabilities file " + caps_file);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(caps_file + ": not a capabilities JSON file: " + e.what());
  }
  return j.get<qemu::QemuCaps>();
}

std::string StateRoot() {
  const char* env = std::getenv("QLAUNCH_STATE_DIR");
  return env && *env ? env : "/run/qlaunch";
}

qemu::PlanOptions DefaultPlanOptions(const std::string& name, qemu::PreallocMode mode) {
  qemu::PlanOptions opts;
  opts.prealloc = mode;
  std::string dir = StateRoot() + "/" + name;
  opts.qmp_socket = dir + "/qmp.sock";
  opts.memory_backing_dir = dir + "/ram";
  return opts;
}

std::optional<qemu::PreallocMode> ParsePreallocMode(const std::string& text) {
  if (text == "auto") return qemu::PreallocMode::kAuto;
  if (text == "qemu") return qemu::PreallocMode::kQemu;
  if (text == "launcher") return qemu::PreallocMode::kLauncher;
  return std::nullopt;
}

}  // namespace qlaunch::launcher
