// qlaunch capabilities: what this host (NUMA nodes, CPUs, distances, hugepage pools) and the
// QEMU binary can do.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/usage_error.h"
#include "launcher/host/warm_pool.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/slurm_gres.h"
#include "numa/host_json.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string sysfs, qemu, caps_file, format = "text", node_name;
  bool json = false;
};

// This host's short name, as Slurm's NodeName usually is.
std::string ShortHostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  std::string s = name;
  return s.substr(0, s.find('.'));
}

// --format gres: the slurm.conf and gres.conf lines for this host's hugepage pools.
int RunGres(const Options& o) {
  numa::HostTopology host = LoadHost(o.sysfs);
  const std::string node = o.node_name.empty() ? ShortHostName() : o.node_name;
  GresConfig config = HostGresConfig(host, node);
  if (config.empty()) {
    std::fprintf(stderr,
                 "qlaunch: error: this host has no hugepages to declare to Slurm (every pool is empty); reserve "
                 "some first, e.g. echo 4096 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages\n");
    return 1;
  }
  std::printf("%s", FormatGresConfig(config, node).c_str());
  return 0;
}

std::string Bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30) && b % (1ull << 30) == 0)
    std::snprintf(buf, sizeof buf, "%lluG", (unsigned long long)(b >> 30));
  else if (b >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%lluM", (unsigned long long)(b >> 20));
  else
    std::snprintf(buf, sizeof buf, "%lluK", (unsigned long long)(b >> 10));
  return buf;
}

// (node, page size) -> pages held warm by the warm pool (warm_pool.h): part of the pool, taken by
// a start of that shape as if free. Only the real /sys has one.
std::map<std::pair<unsigned, uint64_t>, uint64_t> WarmPages(const numa::HostTopology& host, bool real) {
  std::map<std::pair<unsigned, uint64_t>, uint64_t> out;
  if (!real) return out;
  for (const auto& [page, path] : PoolDirs(host))
    for (const WarmEntry& e : PoolDir(path).List())
      if (e.name.state == WarmState::kWarm) out[{e.name.node, page}] += e.name.bytes / page;
  return out;
}

void PrintHost(const numa::HostTopology& host, const std::map<std::pair<unsigned, uint64_t>, uint64_t>& warm) {
  std::printf("host (%s): %zu NUMA node(s), usable CPUs %s\n", host.root.c_str(), host.nodes.size(),
              host.usable_cpus.ToString().c_str());
  for (const auto& n : host.nodes) {
    std::printf("  node %u: cpus %s, memory %s", n.id, n.HasCpus() ? n.cpus.ToString().c_str() : "(none: CPU-less)",
                n.memory_bytes ? Bytes(n.memory_bytes).c_str() : "unknown");
    for (const auto& [size, pool] : n.hugepages) {
      std::printf(", %s pages %llu/%llu free", Bytes(size).c_str(), (unsigned long long)pool.free,
                  (unsigned long long)pool.total);
      if (auto it = warm.find({n.id, size}); it != warm.end() && it->second)
        std::printf(" (+%llu warm)", (unsigned long long)it->second);
    }
    if (!n.distances.empty()) {
      std::printf(", distances");
      for (const auto& [to, d] : n.distances) std::printf(" %u:%u", to, d);
    }
    std::printf("\n");
  }
}

int Run(const Options& o) {
  if (!o.node_name.empty() && o.format != "gres") throw UsageError("--node-name goes with --format gres");
  if (o.format == "gres") return RunGres(o);
  numa::HostTopology host = LoadHost(o.sysfs);
  nlohmann::json out;
  out["host"] = numa::HostToJson(host);
  const auto warm = WarmPages(host, o.sysfs.empty());
  nlohmann::json warm_json = nlohmann::json::array();
  for (const auto& [key, pages] : warm) warm_json.push_back({{"node", key.first}, {"page_bytes", key.second}, {"pages", pages}});
  out["warm_pool"] = warm_json;
  std::string emulator = PickEmulator(o.qemu, nullptr);
  std::string qemu_error;
  try {
    out["qemu"] = LoadCaps(emulator, o.caps_file);
  } catch (const std::exception& e) {
    qemu_error = e.what();
    out["qemu"] = nullptr;
    out["qemu_error"] = qemu_error;
  }
  if (o.json || o.format == "json") {
    std::cout << out.dump(2) << "\n";
  } else {
    PrintHost(host, warm);
    if (qemu_error.empty()) {
      const auto& q = out["qemu"];
      std::printf("qemu %s: version %d.%d.%d\n", emulator.c_str(), q["version"]["major"].get<int>(),
                  q["version"]["minor"].get<int>(), q["version"]["micro"].get<int>());
      for (const char* k : {"thread_context", "prealloc_context", "prealloc_threads", "memfd", "memfd_hugetlb",
                            "json_object", "sandbox", "kvm"})
        std::printf("  %-17s %s\n", k, q.value(k, false) ? "yes" : "no");
    }
  }
  if (!qemu_error.empty()) std::fprintf(stderr, "qlaunch: no QEMU capabilities: %s\n", qemu_error.c_str());
  return 0;
}

}  // namespace

void AddCapabilitiesCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "capabilities",
      "Show the host's NUMA nodes (CPUs, CPU-less nodes, memory, distances, hugepage pools per\n"
      "node and size) and what the QEMU binary supports. Without a usable QEMU the host part is\n"
      "still printed and the reason is given. --format gres prints the lines that declare the hugepage\n"
      "pools to Slurm as a generic resource (slurm.conf GresTypes= and Gres=, gres.conf), counted in\n"
      "pages of each size, one gres.conf line per host node (with its Cores=) where several have pages;\n"
      "a domain's share is what 'qlaunch validate --gres DOMAIN.xml' prints (sbatch --gres=...).\n"
      "Example: qlaunch capabilities --json; qlaunch capabilities --format gres >> /etc/slurm/gres.conf");
  SetKind(sub->add_option("--sysfs", o->sysfs, "read the host from this copy of /sys instead of the real one"),
          ArgKind::kDir);
  SetKind(sub->add_option("--qemu", o->qemu, std::string("QEMU binary to probe (default ") + kDefaultEmulator + ")"),
          ArgKind::kPath);
  SetKind(sub->add_option("--caps-file", o->caps_file, "use capabilities from this JSON file instead of probing QEMU"),
          ArgKind::kInputFile);
  sub->add_flag("--json", o->json, "machine-readable output (= --format json)");
  sub->add_option("--format", o->format, "text, json, or gres (Slurm's slurm.conf and gres.conf lines)")
      ->check(CLI::IsMember({"text", "json", "gres"}))
      ->capture_default_str()
      ->excludes("--json");
  sub->add_option("--node-name", o->node_name, "the Slurm NodeName of this host for --format gres (default: hostname -s)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
