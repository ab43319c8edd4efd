#include "launcher/lifecycle/start/definition.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "domain/parser.h"
#include "domain/validate.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/start/inputs.h"
#include "qemu_cmd/planner.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

std::string NewUuid() {
  std::ifstream in("/proc/sys/kernel/random/uuid");
  std::string uuid;
  in >> uuid;
  return uuid;
}

// The XML with <uuid> after the domain's <name>, as libvirt keeps a definition given without one;
// `xml` itself when the insertion would not read back as the same domain with that uuid.
std::string WithUuid(const std::string& xml, const domain::DomainDef& def) {
  const std::string uuid = NewUuid();
  const size_t end = xml.find("</name>");
  if (uuid.empty() || end == std::string::npos) return xml;
  std::string out = xml;
  out.insert(end + 7, "\n  <uuid>" + uuid + "</uuid>");
  try {
    const domain::DomainDef back = domain::ParseDomainXml(out, def.file);
    if (back.name == def.name && back.uuid == uuid) return out;
  } catch (const std::exception&) {
  }
  return xml;
}

}  // namespace

std::vector<Diagnostic> CheckDefinition(const std::string& xml, const std::string& file, domain::DomainDef* def) {
  std::vector<Diagnostic> problems;
  try {
    *def = domain::ParseDomainXml(xml, file);
  } catch (const DiagnosticError& e) {
    return e.diagnostics();
  }
  problems = def->warnings;
  const std::vector<Diagnostic> semantic = domain::ValidateDomain(*def);
  problems.insert(problems.end(), semantic.begin(), semantic.end());
  if (HasErrors(semantic)) return problems;
  try {
    const numa::HostTopology host = LoadHost("");
    const qemu::QemuCaps caps = LoadCaps(PickEmulator("", def));
    const qemu::LaunchPlan plan = qemu::PlanLaunch(*def, host, caps, DefaultPlanOptions(def->name, qemu::PreallocMode::kAuto));
    for (const Diagnostic& n : plan.notes)
      if (n.message != qemu::kKvmUnusableNote) problems.push_back(n);
  } catch (const DiagnosticError& e) {
    problems.insert(problems.end(), e.diagnostics().begin(), e.diagnostics().end());
  }
  return problems;
}

bool DefineDomain(const DefinedDomains& defined, const domain::DomainDef& def, const std::string& xml,
                  const std::string* edit_of) {
  bool replaced = false;
  defined.WithLock([&] {
    if (edit_of && defined.Read(def.name) != *edit_of)
      throw std::runtime_error("edit: domain '" + def.name + "' was changed by someone else while it was edited (" +
                               defined.FileOf(def.name).string() + "): the edit is not saved");
    if (!def.uuid.empty())
      for (const std::string& other : defined.Names()) {
        if (other == def.name) continue;
        std::string uuid;
        try {
          uuid = domain::ParseDomainXml(defined.Read(other), defined.FileOf(other).string()).uuid;
        } catch (const std::exception&) {  // a garbled definition holds no uuid
        }
        if (uuid == def.uuid)
          throw std::runtime_error("domain '" + other + "' is already defined with uuid " + def.uuid);
      }
    if (defined.IsDefined(def.name)) {
      std::string uuid;
      try {
        uuid = domain::ParseDomainXml(defined.Read(def.name), defined.FileOf(def.name).string()).uuid;
      } catch (const std::exception&) {
      }
      if (!edit_of && (def.uuid.empty() || uuid != def.uuid))
        throw std::runtime_error("domain '" + def.name + "' already exists with uuid " +
                                 (uuid.empty() ? std::string("(none)") : uuid) + " (" +
                                 defined.FileOf(def.name).string() + "; `qlaunch edit " + def.name +
                                 "` changes it, `qlaunch undefine " + def.name + "` removes it)");
      replaced = true;
    }
    defined.Write(def.name, def.uuid.empty() ? WithUuid(xml, def) : xml);
  });
  return replaced;
}

std::string DefinitionOrFile(const std::string& arg, const DefinedDomains& defined) {
  std::error_code ec;
  if (arg == "-" || fs::exists(arg, ec)) return arg;
  try {
    if (defined.IsDefined(arg)) return defined.FileOf(arg).string();
  } catch (const std::invalid_argument&) {  // no name (a path): the caller says it is missing
  }
  return arg;
}

void CheckDefinitionName(const std::string& path, const DefinedDomains& defined) {
  const fs::path file(path);
  if (file.parent_path() != defined.root() || file.extension() != ".xml") return;
  const std::string name = file.stem().string();
  const domain::DomainDef def = domain::ParseDomainFile(path);
  if (def.name == name) return;
  Diagnostic d;
  d.file = path;
  d.line = def.name_line;
  d.element = "name";
  d.message = "the definition of '" + name + "' names domain '" + def.name +
              "' (changed by hand?): `qlaunch edit " + name + "` or `qlaunch undefine " + name + "`";
  throw DiagnosticError(d);
}

}  // namespace qlaunch::launcher
