// qlaunch pool fill|status|drain|scrub|target: the warm pool of pre-zeroed hugepages
// (launcher/host/warm_pool.h; filled and scrubbed by launcher/lifecycle/start/warm_fill.h).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/byte_size.h"
#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/usage_error.h"
#include "launcher/host/warm_pool.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/start_plan.h"
#include "launcher/lifecycle/start/warm_fill.h"
#include "launcher/lifecycle/start/warm_target.h"
#include "prealloc/error.h"
#include "prealloc/progress_line.h"
#include "prealloc/signal_stop.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string action, domain_xml, qemu, prealloc = "auto";
  unsigned count = 1;
  bool count_given = false, json = false, progress = false;
};

int Fill(const Options& o) {
  domain::DomainDef def = LoadDomain(o.domain_xml);
  numa::HostTopology host = LoadHost("");
  const std::string emulator = PickEmulator(o.qemu, &def);
  qemu::QemuCaps caps = LoadCaps(emulator);
  qemu::PlanOptions popts = DefaultPlanOptions(def.name, *ParsePreallocMode(o.prealloc));
  popts.emulator = emulator;
  const qemu::LaunchPlan plan = PlanStart(def, host, caps, &popts);
  const std::vector<ShapedBackend> set = PoolShapes(plan, host, o.domain_xml);
  prealloc::SignalStop stop;  // SIGINT/SIGTERM: the files not yet warm are given back
  std::unique_ptr<prealloc::ProgressLine> line;
  prealloc::ProgressFn progress;
  if (o.progress) {
    line = std::make_unique<prealloc::ProgressLine>(stderr, "pool fill");
    progress = [l = line.get()](uint64_t done, uint64_t total) { l->Update(done, total); };
  }
  PoolFillResult r;
  try {
    r = FillPool(set, o.count, host, &stop.flag(), progress);
  } catch (const prealloc::PreallocCancelled&) {
    if (line) line->Finish();
    throw std::runtime_error("interrupted by a signal: the sets not filled were given back (pool status shows "
                             "what is warm)");
  }
  if (line) line->Finish();
  if (o.json) {
    std::printf("%s\n",
                nlohmann::json{{"sets", r.sets}, {"bytes", r.bytes}, {"seconds", r.seconds}}.dump().c_str());
  } else {
    std::printf("%u warm set%s of %s filled for %s (%s in %.3f s)\n", r.sets, r.sets == 1 ? "" : "s",
                FormatBytes(r.bytes / std::max(1u, r.sets)).c_str(), def.name.c_str(), FormatBytes(r.bytes).c_str(),
                r.seconds);
  }
  return 0;
}

int Status(const Options& o) {
  numa::HostTopology host = LoadHost("");
  // (node, page size) -> state -> (files, bytes)
  std::map<std::pair<unsigned, uint64_t>, std::map<std::string, std::pair<uint64_t, uint64_t>>> rows;
  nlohmann::json dirs = nlohmann::json::object();
  for (const auto& [page, path] : PoolDirs(host)) {
    PoolDir dir(path);
    dirs[std::to_string(page)] = path.string();
    dir.RecoverStale();
    for (const WarmEntry& e : dir.List()) {
      auto& cell = rows[{e.name.node, page}][ToString(e.name.state)];
      cell.first += 1;
      cell.second += e.name.bytes;
    }
  }
  if (o.json) {
    nlohmann::json pools = nlohmann::json::array();
    for (const auto& [key, states] : rows) {
      nlohmann::json p{{"node", key.first}, {"page_bytes", key.second}};
      for (const char* s : {"warm", "dirty", "use", "fill", "scrub"}) {
        auto it = states.find(s);
        const auto [files, bytes] = it == states.end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second;
        p[std::string(s) == "use" ? "in_use" : s] = {{"files", files}, {"bytes", bytes}, {"pages", bytes / key.second}};
      }
      pools.push_back(p);
    }
    std::printf("%s\n", nlohmann::json{{"directories", dirs}, {"pools", pools}}.dump(2).c_str());
    return 0;
  }
  if (rows.empty()) {
    std::printf("the warm pool is empty\n");
    return 0;
  }
  std::printf("%-5s %-9s %-14s %-14s %-14s %s\n", "node", "page", "warm", "dirty", "in use", "being worked on");
  for (const auto& [key, states] : rows) {
    auto cell = [&](std::initializer_list<const char*> names) {
      uint64_t files = 0, bytes = 0;
      for (const char* n : names)
        if (auto it = states.find(n); it != states.end()) files += it->second.first, bytes += it->second.second;
      return FormatBytes(bytes) + " (" + std::to_string(files) + ")";
    };
    std::printf("%-5u %-9s %-14s %-14s %-14s %s\n", key.first, FormatPageSize(key.second).c_str(),
                cell({"warm"}).c_str(), cell({"dirty"}).c_str(), cell({"use"}).c_str(), cell({"fill", "scrub"}).c_str());
  }
  return 0;
}

int Drain(const Options& o) {
  numa::HostTopology host = LoadHost("");
  uint64_t files = 0, bytes = 0, left_files = 0;
  for (const auto& [page, path] : PoolDirs(host)) {
    PoolDir dir(path);
    for (const WarmEntry& e : dir.Drain()) ++files, bytes += e.name.bytes;
    for (const WarmEntry& e : dir.List()) {
      (void)e;
      ++left_files;
    }
    if (dir.Exists() && dir.List().empty()) ::rmdir(path.c_str());  // nothing left: the directory goes too
  }
  if (o.json) {
    std::printf("%s\n", nlohmann::json{{"files", files}, {"bytes", bytes}, {"left", left_files}}.dump().c_str());
  } else {
    std::printf("%llu file%s (%s) given back to the kernel", static_cast<unsigned long long>(files),
                files == 1 ? "" : "s", FormatBytes(bytes).c_str());
    if (left_files) std::printf("; %llu in use or being worked on stay", static_cast<unsigned long long>(left_files));
    std::printf("\n");
  }
  return 0;
}

void PrintRefill(const RefillResult& f) {
  std::printf("%u warm set%s (%s) filled up to the targets\n", f.sets, f.sets == 1 ? "" : "s", FormatBytes(f.bytes).c_str());
  for (const std::string& e : f.errors) std::fprintf(stderr, "qlaunch: warning: pool: target %s\n", e.c_str());
}

// Scrubs, then fills the targets up (what a domain's end and a start on warm files run detached).
int Scrub(const Options& o) {
  numa::HostTopology host = LoadHost("");
  prealloc::SignalStop stop;
  ScrubResult r = ScrubPool(host, &stop.flag());
  const bool targets = AnyWarmTarget();
  RefillResult f;
  if (targets) f = RefillWarmTargets(host, &stop.flag());
  if (o.json) {
    nlohmann::json scrubbed = nlohmann::json::array();
    for (const ScrubbedFile& f : r.scrubbed)
      scrubbed.push_back({{"node", f.node}, {"bytes", f.bytes}, {"cpus", f.cpus.Ids()}, {"observed_cpus", f.observed_cpus.Ids()}});
    nlohmann::json j{{"files", r.files}, {"bytes", r.bytes}, {"seconds", r.seconds}, {"scrubbed", scrubbed}};
    if (targets) j["refilled"] = {{"sets", f.sets}, {"bytes", f.bytes}, {"errors", f.errors}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%u file%s (%s) scrubbed\n", r.files, r.files == 1 ? "" : "s", FormatBytes(r.bytes).c_str());
    if (targets) PrintRefill(f);
  }
  return f.errors.empty() ? 0 : 1;
}

// pool target DOMAIN.xml --count N: keep N sets (0: no target), filled up now; without DOMAIN.xml,
// the targets and the sets each has.
int Target(const Options& o) {
  numa::HostTopology host = LoadHost("");
  if (!o.domain_xml.empty()) {
    if (!o.count_given) throw UsageError("target DOMAIN.xml needs --count: the sets to keep (0: no target)");
    WarmTarget t;
    t.domain = LoadDomain(o.domain_xml).name;
    std::ifstream in(o.domain_xml);
    t.xml.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    t.count = o.count;
    t.qemu = o.qemu;
    t.prealloc = o.prealloc;
    if (t.count > 0) TargetShapes(t, host);  // a domain the pool cannot hold is refused before it is kept
    SaveWarmTarget(t);
    if (t.count > 0) {
      prealloc::SignalStop stop;
      RefillResult f = RefillWarmTargets(host, &stop.flag());
      if (!o.json) PrintRefill(f);
      if (!f.errors.empty()) return 1;
    }
  }
  const std::map<WarmKey, unsigned> files = CountPoolFiles(host);
  nlohmann::json list = nlohmann::json::array();
  for (const WarmTarget& t : LoadWarmTargets()) {
    nlohmann::json j{{"domain", t.domain}, {"count", t.count}};
    try {
      j["sets"] = SetsIn(TargetShapes(t, host), files);
    } catch (const std::exception& e) {
      j["error"] = e.what();
    }
    list.push_back(j);
  }
  if (o.json) {
    std::printf("%s\n", nlohmann::json{{"directory", PoolTargetsDir().string()}, {"targets", list}}.dump(2).c_str());
    return 0;
  }
  if (o.domain_xml.empty() && list.empty()) std::printf("no warm targets (%s)\n", PoolTargetsDir().string().c_str());
  for (const auto& j : list)
    std::printf("%s: %u set%s to keep, %s\n", j["domain"].get<std::string>().c_str(), j["count"].get<unsigned>(),
                j["count"] == 1u ? "" : "s",
                j.contains("sets") ? (std::to_string(j["sets"].get<unsigned>()) + " warm or being scrubbed").c_str()
                                   : j["error"].get<std::string>().c_str());
  return 0;
}

int Run(const Options& o) {
  const bool fill = o.action == "fill", target = o.action == "target";
  if (!fill && !target && !o.domain_xml.empty()) throw UsageError("DOMAIN.xml goes with fill and target only");
  if (fill && o.domain_xml.empty()) throw UsageError("fill needs DOMAIN.xml: the domain whose memory the sets are shaped like");
  if (!fill && !target && (o.count_given || o.progress || !o.qemu.empty()))
    throw UsageError("--count, --progress and --qemu go with fill and target only");
  if (target && o.domain_xml.empty() && (o.count_given || !o.qemu.empty()))
    throw UsageError("--count and --qemu go with target DOMAIN.xml");
  if (o.count == 0 && !target) throw UsageError("--count 0: expected at least one set");
  if (!ParsePreallocMode(o.prealloc)) throw UsageError("--prealloc '" + o.prealloc + "': expected auto, qemu or launcher");
  if (fill) return Fill(o);
  if (o.action == "status") return Status(o);
  if (o.action == "drain") return Drain(o);
  if (target) return Target(o);
  return Scrub(o);
}

}  // namespace

void AddPoolCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "pool",
      "The warm pool: hugetlbfs files whose pages are faulted in (zero), on their node, held by no\n"
      "process, that start, run, start --incoming and restore take for a launcher backend of the same\n"
      "page size and node (as large or larger: cut down) instead of allocating and filling it.\n"
      "  fill DOMAIN.xml   make --count sets shaped like the domain's backends\n"
      "  status            warm, dirty (waiting for a scrub) and in use, per node and page size\n"
      "  drain             give the warm and dirty files' pages back to the kernel\n"
      "  scrub             zero the dirty files now and make them warm (a domain's end starts this\n"
      "                    in the background, at idle priority), then fill the targets up\n"
      "  target DOMAIN.xml --count N\n"
      "                    keep N sets shaped like the domain (0: none), filled up now and again\n"
      "                    by the background worker after each scrub and each start on warm sets;\n"
      "                    without DOMAIN.xml: the targets and the sets each has\n"
      "The pool's directory is <hugetlbfs mount>/qlaunch-pool, or $QLAUNCH_POOL_DIR under each mount.\n"
      "Example: qlaunch pool fill two-cells.xml --count 2");
  sub->add_option("ACTION", o->action, "fill, status, drain, scrub or target")
      ->required()
      ->check(CLI::IsMember({"fill", "status", "drain", "scrub", "target"}));
  SetKind(sub->add_option("DOMAIN.xml", o->domain_xml, "fill, target: the domain whose backends the sets are shaped like"),
          ArgKind::kInputFile);
  sub->add_option("--count", o->count, "fill: how many sets to make (default 1); target: how many to keep (0: no target)")
      ->each([o](const std::string&) { o->count_given = true; });
  SetKind(sub->add_option("--qemu", o->qemu, "fill, target: the QEMU binary the domain is planned for (as start's --qemu)"),
          ArgKind::kPath);
  sub->add_option("--prealloc", o->prealloc,
                  "fill, target: who preallocates the backends, as start's --prealloc (auto, qemu or launcher; a warm\n"
                  "file serves a backend the launcher fills: its fd goes to QEMU)");
  sub->add_flag("--progress", o->progress, "fill: show a progress line on stderr");
  sub->add_flag("--json", o->json, "print the result as JSON");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
