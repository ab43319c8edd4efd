#include "fuzz/domain_pipeline.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"
#include "domain/parser.h"
#include "domain/validate.h"
#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/planner.h"
#include "support/qemu_opts_split.h"

namespace qlaunch::testing {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFile = "fuzz.xml";

InvariantCounts g_counts;  // the fuzzer and the tests call the pipeline from one thread

[[noreturn]] void Bug(const std::string& what) { throw PipelineBug(what); }

// Every diagnostic names the input file (the planner may also report host problems without
// one) and renders as one line.
void CheckDiagnostics(const std::vector<Diagnostic>& diags, bool file_optional) {
  ++g_counts.diagnostics;
  if (diags.empty()) Bug("a DiagnosticError without diagnostics");
  for (const Diagnostic& d : diags) {
    const std::string text = d.ToString();
    if (d.line < 0) Bug("negative line in: " + text);
    if (d.file != kFile && !(file_optional && d.file.empty())) Bug("diagnostic does not name the file: " + text);
    if (d.message.empty()) Bug("diagnostic without a message: " + text);
  }
}

// The argument after `opt` whose value starts with `prefix`; nullptr when there is none.
const std::string* FindOption(const std::vector<std::string>& argv, const std::string& opt,
                              const std::string& prefix = "") {
  for (size_t i = 1; i + 1 < argv.size(); ++i)
    if (argv[i] == opt && argv[i + 1].rfind(prefix, 0) == 0) return &argv[i + 1];
  return nullptr;
}

// What QEMU would read back from the options that carry user strings is exactly those
// strings: no input can add or change an option.
void CheckPlan(const qemu::LaunchPlan& plan, const domain::DomainDef& def, const qemu::PlanOptions& opts) {
  ++g_counts.plan;
  if (plan.argv.empty() || plan.argv[0].empty()) Bug("empty argv");
  const std::string* name = FindOption(plan.argv, "-name");
  if (!name) Bug("no -name");
  const std::vector<std::pair<std::string, std::string>> want_name = {{"guest", def.name}, {"debug-threads", "on"}};
  if (QemuOptsPairs(*name, false) != want_name) Bug("-name '" + *name + "' does not read back as guest=" + def.name);
  const std::string* qmp = FindOption(plan.argv, "-chardev", "socket,id=qmp,");
  if (!qmp) Bug("no QMP -chardev");
  bool path_ok = false;
  for (const auto& [key, value] : QemuOptsPairs(*qmp)) path_ok |= key == "path" && value == opts.qmp_socket;
  if (!path_ok) Bug("QMP -chardev '" + *qmp + "' does not read back path=" + opts.qmp_socket);
  // Boot memory is what the non-device backends hold together, and what -m says; no size wraps.
  uint64_t boot = 0;
  for (const qemu::MemoryBackend& b : plan.backends)
    if (!b.is_device && __builtin_add_overflow(boot, b.size_bytes, &boot)) Bug("backend sizes overflow 64 bits");
  if (boot != plan.initial_memory_bytes)
    Bug("backends hold " + std::to_string(boot) + " bytes of boot memory, the plan says " +
        std::to_string(plan.initial_memory_bytes));
  const std::string* m = FindOption(plan.argv, "-m");
  if (!m || m->rfind("size=" + std::to_string(plan.initial_memory_bytes / 1024) + "k", 0) != 0)
    Bug("-m does not say the boot memory: " + (m ? *m : std::string("<absent>")));
  // QEMU's own -smp rule: sockets*dies*clusters*cores*threads is maxcpus (else the CPU count).
  const std::string* smp = FindOption(plan.argv, "-smp");
  if (!smp) Bug("no -smp");
  uint64_t cpus = 0, maxcpus = 0, product = 1;
  bool overflow = false;
  for (const auto& [key, value] : QemuOptsPairs(*smp)) {
    const uint64_t n = std::strtoull(value.c_str(), nullptr, 10);
    if (key.empty() || key == "cpus") cpus = n;
    else if (key == "maxcpus") maxcpus = n;
    else overflow |= __builtin_mul_overflow(product, n, &product);
  }
  if (overflow || product != (maxcpus ? maxcpus : cpus)) Bug("-smp " + *smp + ": the topology does not multiply out");
  // domxml-to-native --format json prints this: it must serialise (valid UTF-8 throughout).
  (void)qemu::ToJson(plan).dump();
}

// The domain with every free-form string QEMU options can carry defanged: the characters that
// mean something to QEMU's key=value syntax (',' and '=') replaced by '_'.
domain::DomainDef Defanged(domain::DomainDef def) {
  auto fix = [](std::string& s) {
    for (char& c : s)
      if (c == ',' || c == '=') c = '_';
  };
  fix(def.name);
  fix(def.cpu.model);
  fix(def.os.machine);
  for (domain::MemoryDevice& m : def.devices.memory) fix(m.source_path);
  for (domain::Disk& d : def.devices.disks) {
    fix(d.source);
    fix(d.driver_type);
    fix(d.target_dev);
  }
  for (domain::CharDev& c : def.devices.chardevs) fix(c.path);
  return def;
}

// The keys an option value sets: QemuOpts key=value (the implied first value has key ""), or
// the members of a JSON object.
std::vector<std::string> OptionKeys(const std::string& value) {
  std::vector<std::string> keys;
  if (!value.empty() && value[0] == '{') {
    nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
    if (!j.is_object()) Bug("an option value that starts with '{' is not a JSON object: " + value);
    for (const auto& [key, v] : j.items()) keys.push_back(key);
  } else {
    for (const auto& [key, v] : QemuOptsPairs(value)) keys.push_back(key);
  }
  return keys;
}

// Strings from the XML change values only, never which options and keys there are: the plan
// of the domain and of its defanged twin, where they have the same options, set the same keys.
void CheckNoInjection(const std::vector<std::string>& argv, const std::vector<std::string>& twin) {
  static const std::set<std::string> kKeyValue = {"-name", "-machine", "-accel", "-m", "-object", "-overcommit",
                                                  "-smp", "-numa", "-chardev", "-mon", "-device", "-drive",
                                                  "-blockdev", "-netdev", "-boot", "-sandbox"};
  auto skip = [] { ++g_counts.injection_skipped; };
  if (argv.size() != twin.size()) return skip();  // planned differently (e.g. another machine type)
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i].rfind('-', 0) == 0 && argv[i] != twin[i]) return skip();
  }
  ++g_counts.injection;
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    if (!kKeyValue.count(argv[i])) continue;
    if (OptionKeys(argv[i + 1]) != OptionKeys(twin[i + 1]))
      Bug("user strings changed the keys of " + argv[i] + " '" + argv[i + 1] + "' (defanged: '" + twin[i + 1] + "')");
    ++i;
  }
}

qemu::PlanOptions StartOptions(const domain::DomainDef& def, qemu::PreallocMode mode) {
  qemu::PlanOptions opts;  // as `qlaunch start` sets them (launcher/lifecycle/start/inputs.cc)
  opts.prealloc = mode;
  opts.qmp_socket = "/run/qlaunch/" + def.name + "/qmp.sock";
  opts.memory_backing_dir = "/run/qlaunch/" + def.name + "/ram";
  opts.emulator = def.devices.emulator.empty() ? "/usr/bin/qemu-system-x86_64" : def.devices.emulator;
  return opts;
}

}  // namespace

const char* ToString(PipelineOutcome o) {
  switch (o) {
    case PipelineOutcome::kParseError: return "parse-error";
    case PipelineOutcome::kInvalid: return "invalid";
    case PipelineOutcome::kPlanError: return "plan-error";
    case PipelineOutcome::kPlanned: return "planned";
  }
  return "?";
}

PipelineInputs LoadPipelineInputs(const fs::path& source_dir) {
  PipelineInputs in;
  numa::ReadOptions ropts;
  ropts.sysfs_root = source_dir / "tests/fixtures/hosts/four-node-cpuless";
  in.host = numa::ReadHostTopology(ropts);
  for (const char* name : {"qemu-7.2.json", "qemu-5.2.json"}) {
    const fs::path path = source_dir / "tests/fixtures/caps" / name;
    std::ifstream file(path);
    if (!file) throw std::runtime_error("cannot read " + path.string());
    in.caps.push_back(nlohmann::json::parse(file).get<qemu::QemuCaps>());
  }
  return in;
}

PipelineOutcome RunDomainPipeline(std::string_view xml, const PipelineInputs& in) {
  domain::DomainDef def;
  try {
    def = domain::ParseDomainXml(xml, kFile);
  } catch (const DiagnosticError& e) {
    CheckDiagnostics(e.diagnostics(), false);
    return PipelineOutcome::kParseError;
  }
  for (const Diagnostic& w : def.warnings) CheckDiagnostics({w}, false);

  // Documented never to throw: anything escaping is a bug (the fuzzer sees it as a crash).
  std::vector<Diagnostic> problems = domain::ValidateDomain(def);
  if (!problems.empty()) CheckDiagnostics(problems, false);
  if (HasErrors(problems)) return PipelineOutcome::kInvalid;

  bool planned = false;
  const domain::DomainDef twin = Defanged(def);
  for (const qemu::QemuCaps& caps : in.caps) {
    for (qemu::PreallocMode mode : {qemu::PreallocMode::kAuto, qemu::PreallocMode::kQemu, qemu::PreallocMode::kLauncher}) {
      const qemu::PlanOptions opts = StartOptions(def, mode);
      qemu::LaunchPlan plan;
      try {
        plan = qemu::PlanLaunch(def, in.host, caps, opts);
      } catch (const DiagnosticError& e) {
        CheckDiagnostics(e.diagnostics(), true);
        continue;
      } catch (const std::runtime_error&) {
        continue;
      }
      CheckPlan(plan, def, opts);
      planned = true;
      try {
        CheckNoInjection(plan.argv, qemu::PlanLaunch(twin, in.host, caps, StartOptions(twin, mode)).argv);
      } catch (const std::runtime_error&) {
        // The twin is not planned (say its machine type is now unknown): nothing to compare.
        ++g_counts.injection_skipped;
      }
    }
  }
  return planned ? PipelineOutcome::kPlanned : PipelineOutcome::kPlanError;
}

InvariantCounts InvariantCountsSoFar() { return g_counts; }

std::string ToString(const InvariantCounts& c) {
  return "diagnostics=" + std::to_string(c.diagnostics) + " plan=" + std::to_string(c.plan) +
         " injection=" + std::to_string(c.injection) + " injection_skipped=" + std::to_string(c.injection_skipped);
}

}  // namespace qlaunch::testing
