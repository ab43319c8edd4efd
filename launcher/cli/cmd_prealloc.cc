// qlaunch prealloc: the built-in preallocator on its own, for benchmarking and inspection.
// Creates memfds (one per --nodes node, or one unbound), populates them concurrently with
// pinned workers, reports, optionally holds the memory, then releases everything.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/id_set.h"
#include "launcher/cli/command.h"
#include "numa/cpu_affinity.h"
#include "numa/host_topology.h"
#include "common/byte_size.h"
#include "prealloc/error.h"
#include "prealloc/mem_policy.h"
#include "prealloc/memfd.h"
#include "prealloc/preallocator.h"
#include "prealloc/progress_line.h"
#include "prealloc/signal_stop.h"
#include "prealloc/worker_plan.h"

namespace qlaunch::launcher {

namespace {

namespace pa = qlaunch::prealloc;

struct Options {
  std::string size, page_size = "4K", nodes, policy;
  unsigned threads = 0;
  double hold = 0;
  bool json = false, progress = false;
};

uint64_t ParseSizeOption(const std::string& flag, const std::string& text) {
  std::optional<uint64_t> v = ParseByteSize(text);
  if (!v || *v == 0)
    throw std::runtime_error(flag + " '" + text + "': expected a size such as 512M, 8G or 1GiB");
  return *v;
}

numa::HostTopology ReadHost(bool need_nodes) {
  try {
    return numa::ReadHostTopology({});
  } catch (const std::exception&) {
    if (need_nodes) throw;
    numa::HostTopology topo;  // a kernel without NUMA: unbound memory only
    topo.usable_cpus = numa::CurrentCpuAffinity();
    return topo;
  }
}

// One region per node of --nodes (the size split evenly in whole pages), or one unbound.
std::vector<pa::RegionSpec> PlanRegions(const Options& o, const numa::HostTopology& topo,
                                        uint64_t size, uint64_t page) {
  std::vector<pa::RegionSpec> specs;
  if (size % page != 0)
    throw std::runtime_error("--size " + o.size + " is not a multiple of the " +
                             FormatPageSize(page) + " page size");
  if (o.nodes.empty()) {
    if (!o.policy.empty()) throw std::runtime_error("--policy needs --nodes");
    pa::RegionSpec s;
    s.name = "qlaunch-prealloc";
    s.size_bytes = size;
    s.page_bytes = page;
    s.worker_cpus = pa::WorkerCpus(topo, {});
    specs.push_back(std::move(s));
    return specs;
  }
  std::optional<IdSet> nodes = IdSet::Parse(o.nodes);
  if (!nodes || nodes->Empty())
    throw std::runtime_error("--nodes '" + o.nodes + "': expected a node list such as 0-1,3");
  IdSet missing = nodes->Minus(topo.NodeIds());
  if (!missing.Empty())
    throw std::runtime_error("--nodes: host node" + std::string(missing.Size() > 1 ? "s " : " ") +
                             missing.ToString() + " not present (this host has nodes " +
                             topo.NodeIds().ToString() + ")");
  std::string policy = o.policy.empty() ? "bind" : o.policy;
  if (pa::ParsePolicyMode(policy).value_or(pa::PolicyMode::kDefault) == pa::PolicyMode::kDefault)
    throw std::runtime_error("--policy '" + o.policy + "': expected bind, preferred or interleave");
  const uint64_t pages = size / page, per = pages / nodes->Size(), extra = pages % nodes->Size();
  if (per == 0)
    throw std::runtime_error("--size " + o.size + " is less than one " + FormatPageSize(page) +
                             " page per node");
  size_t i = 0;
  for (unsigned node : *nodes) {
    pa::RegionSpec s;
    s.name = "qlaunch-prealloc-node" + std::to_string(node);
    s.size_bytes = (per + (i++ < extra ? 1 : 0)) * page;
    s.page_bytes = page;
    s.host_nodes = IdSet{node};
    s.policy = policy;
    s.worker_cpus = pa::WorkerCpus(topo, s.host_nodes);
    specs.push_back(std::move(s));
  }
  return specs;
}

double GiBPerSecond(uint64_t bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / (1024.0 * 1024 * 1024) : 0;
}

void PrintJson(const std::vector<pa::RegionSpec>& specs, const pa::PreallocResult& r, uint64_t page) {
  nlohmann::json regions = nlohmann::json::array();
  for (size_t i = 0; i < specs.size(); ++i) {
    const pa::RegionResult& rr = r.regions[i].result;
    nlohmann::json j;
    j["node"] = specs[i].host_nodes.Empty() ? nlohmann::json(nullptr)
                                            : nlohmann::json(specs[i].host_nodes.Ids().front());
    j["bytes"] = rr.bytes;
    j["seconds"] = rr.seconds;
    j["threads"] = rr.threads;
    j["cpus"] = rr.cpus.Ids();
    j["observed_cpus"] = rr.observed_cpus.Ids();
    regions.push_back(std::move(j));
  }
  nlohmann::json out;
  out["size_bytes"] = r.bytes;
  out["page_size_bytes"] = page;
  out["threads"] = r.threads;
  out["method"] = pa::ToString(r.method);
  out["seconds"] = r.seconds;
  out["populate_seconds"] = r.populate_seconds;
  out["gib_per_s"] = GiBPerSecond(r.bytes, r.seconds);
  out["regions"] = std::move(regions);
  std::printf("%s\n", out.dump(2).c_str());
}

void PrintSummary(const std::vector<pa::RegionSpec>& specs, const pa::PreallocResult& r, uint64_t page) {
  std::printf("preallocated %s of %s pages in %.3f s (%.2f GiB/s), %u thread%s, %s\n",
              FormatBytes(r.bytes).c_str(), FormatPageSize(page).c_str(), r.seconds,
              GiBPerSecond(r.bytes, r.seconds), r.threads, r.threads == 1 ? "" : "s",
              pa::ToString(r.method));
  for (size_t i = 0; i < specs.size(); ++i) {
    const pa::RegionResult& rr = r.regions[i].result;
    std::string where = specs[i].host_nodes.Empty() ? "unbound"
                                                    : "node " + specs[i].host_nodes.ToString();
    std::printf("  %s: %s in %.3f s, %u thread%s on CPUs %s\n", where.c_str(),
                FormatBytes(rr.bytes).c_str(), rr.seconds, rr.threads,
                rr.threads == 1 ? "" : "s",
                rr.cpus.Empty() ? "(any)" : rr.cpus.ToString().c_str());
  }
}

void Hold(double seconds, const pa::SignalStop& signals, uint64_t bytes) {
  std::fprintf(stderr, "prealloc: holding %s for %g s (pid %d; SIGINT/SIGTERM releases it)\n",
               FormatBytes(bytes).c_str(), seconds, static_cast<int>(getpid()));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!signals.stopped() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (signals.stopped()) std::fprintf(stderr, "prealloc: hold ended by signal %d\n", signals.signal());
}

int Run(const Options& o) {
  const uint64_t size = ParseSizeOption("--size", o.size);
  const uint64_t page = ParseSizeOption("--page-size", o.page_size);
  const numa::HostTopology topo = ReadHost(!o.nodes.empty());
  const std::vector<pa::RegionSpec> specs = PlanRegions(o, topo, size, page);

  pa::SignalStop signals;
  pa::PreallocOptions popts;
  const unsigned usable = std::max<unsigned>(1, topo.usable_cpus.Size());
  popts.max_threads = o.threads ? std::min(o.threads, usable) : usable;
  popts.stop = &signals.flag();
  std::optional<pa::ProgressLine> line;
  if (o.progress) {
    line.emplace(stderr);
    popts.progress = [&line](uint64_t done, uint64_t total) { line->Update(done, total); };
  }
  pa::PreallocResult result = pa::Preallocate(specs, popts);
  if (line) line->Finish();

  if (o.json)
    PrintJson(specs, result, page);
  else
    PrintSummary(specs, result, page);
  std::fflush(stdout);
  if (o.hold > 0) Hold(o.hold, signals, result.bytes);
  return 0;  // result's memfds close here
}

}  // namespace

void AddPreallocCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "prealloc",
      "Run qlaunch's own preallocator alone: what `start --prealloc auto` fills shared hugetlb memfd\n"
      "backends with (on QEMU 7.2 too, which has thread-context; from QEMU 9.0 on only where more CPUs\n"
      "are near the memory than QEMU would use: docs/planner.md), and `--prealloc launcher` every shared\n"
      "memfd backend. It creates memfds, binds them to host nodes, populates them with workers pinned\n"
      "to those nodes' CPUs, reports the time and releases them. With --nodes, one region per node\n"
      "(the size split evenly), all populated at once.\n"
      "Example: qlaunch prealloc --size 8G --page-size 2M --nodes 0-1 --progress");
  sub->add_option("--size", o->size, "total memory, e.g. 512M, 8G, 1GiB")->required();
  sub->add_option("--page-size", o->page_size, "4K (ordinary pages, default), 2M or 1G (hugetlb)");
  CLI::Option* nodes =
      sub->add_option("--nodes", o->nodes, "host nodes, one region per node (e.g. 0-1); default: unbound");
  sub->add_option("--policy", o->policy, "with --nodes: bind (the default), preferred or interleave")
      ->check(CLI::IsMember({"bind", "preferred", "interleave"}))
      ->needs(nodes);
  sub->add_option("--threads", o->threads,
                  "worker threads over all regions (default and maximum: the CPUs we may use)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--hold", o->hold, "keep the memory this many seconds before releasing it")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--json", o->json, "print the result as JSON");
  sub->add_flag("--progress", o->progress, "show a progress line on stderr");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
