// The rounds of `qlaunch bench` (RunBench, launcher/bench/bench_starters.h): which starters run,
// one warm-up each, then the rounds in rotating order, and after every run the wait until the
// domain is gone and every hugepage is back.
#include <cstdio>
#include <stdexcept>

#include "launcher/bench/bench_kernel.h"
#include "launcher/bench/bench_starters.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/start/inputs.h"

namespace qlaunch::launcher {

namespace {

// The bench would destroy a domain of that name: refuse one that runs already.
void CheckNotRunning(const BenchConfig& cfg, bool libvirt) {
  try {
    const ProcessRef qemu = RunningQemu(StateDir(), cfg.name, Verb::kDestroy);  // the bench destroys what it starts
    throw std::runtime_error("domain " + cfg.name + " is running under qlaunch (pid " + std::to_string(qemu.pid) +
                             "); the bench starts and destroys a domain of that name: destroy it first, or bench a "
                             "copy of the XML with another <name>");
  } catch (const NotRunningError&) {
  }
  if (libvirt && RunChild(VirshArgv(cfg, {"domstate", cfg.name}), cfg.work_dir, "virsh-domstate", cfg.interrupt,
                          std::chrono::seconds(30))
                     .ok())
    throw std::runtime_error("domain " + cfg.name + " exists in libvirt (" + cfg.uri +
                             "); the bench starts and destroys a domain of that name: destroy or undefine it first, "
                             "or bench a copy of the XML with another <name>");
}

// "bench: round 2/5, virsh": one line rewritten in place on a terminal, else a line per run.
class Progress {
 public:
  explicit Progress(bool tty) : tty_(tty) {}
  ~Progress() { Clear(); }
  void Before(const std::string& when, const std::string& starter) {
    if (!tty_) return;
    std::fprintf(stderr, "\rbench: %s, %s\033[K", when.c_str(), starter.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void After(const std::string& when, const std::string& starter, double ms) {
    if (!tty_) std::fprintf(stderr, "bench: %s, %s: %.1f ms\n", when.c_str(), starter.c_str(), ms);
  }
  void Clear() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool tty_;
  bool shown_ = false;
};

}  // namespace

BenchResult RunBench(BenchRequest req) {
  BenchConfig& cfg = req.cfg;
  const domain::DomainDef def = LoadDomain(cfg.domain_xml);
  cfg.name = def.name;
  StartInterrupt interrupt;
  cfg.interrupt = &interrupt;
  BenchWorkDir work;
  cfg.work_dir = work.path();

  BenchResult result;
  result.domain = def.name;
  result.xml = cfg.domain_xml;
  result.uri = cfg.uri;
  result.rounds = req.rounds;
  result.start_options = cfg.start_options;

  bool virsh = req.virsh;
  if (virsh) {
    if (std::optional<std::string> why = VirshUnreachable(cfg)) {
      std::fprintf(stderr,
                   "qlaunch: warning: virsh: cannot connect to %s (%s): libvirt comparison skipped; start it with "
                   "scripts/libvirt-up\n",
                   cfg.uri.c_str(), why->c_str());
      result.skipped.emplace_back("virsh", "cannot connect to " + cfg.uri + " (" + *why + ")");
      virsh = false;
    }
  }
  CheckNotRunning(cfg, virsh);
  std::vector<std::unique_ptr<Starter>> starters;
  starters.push_back(MakeQlaunchStarter(cfg));
  if (virsh) starters.push_back(MakeVirshStarter(cfg));
  if (req.qemu) starters.push_back(MakeQemuStarter(cfg, def));
  if (req.floor) starters.push_back(MakeFloorStarter(cfg, def));
  if (req.floor_sized) starters.push_back(MakeSizedFloorStarter(cfg, def));
  if (req.kernel || req.overlap) {
    if (std::optional<std::string> ref = FindPopulateRef(req.populate_ref)) {
      if (req.kernel) starters.push_back(MakeKernelStarter(cfg, def, *ref));
      if (req.overlap) starters.push_back(MakeOverlapStarter(cfg, def, *ref));
    } else {
      const std::string why = req.populate_ref.empty() ? "populate_ref is not installed beside qlaunch"
                                                       : req.populate_ref + " is not an executable file";
      auto skip = [&](const char* name) {
        std::fprintf(stderr, "qlaunch: warning: %s: %s: the kernel reference skipped\n", name, why.c_str());
        result.skipped.emplace_back(name, why);
      };
      if (req.kernel) skip("kernel");
      if (req.overlap) skip("overlap");
    }
  }
  for (const auto& s : starters) result.starters.push_back({s->name(), 0, {}, {}});
  interrupt.ThrowIfInterrupted();

  result.hugepages = ReadFreeHugepages();
  Progress progress(req.tty_progress);
  auto run_one = [&](size_t i, const std::string& when) {
    const std::string name = starters[i]->name();
    progress.Before(when, name);
    StarterRun run;
    try {
      run = starters[i]->Run();
      interrupt.ThrowIfInterrupted();
      WaitHugepagesBack(result.hugepages, std::chrono::seconds(60), interrupt, name + " (" + when + ")");
    } catch (const std::exception& e) {
      progress.Clear();
      interrupt.ThrowIfInterrupted();
      throw std::runtime_error("bench: starter " + name + " failed (" + when + "): " + e.what());
    }
    progress.After(when, name, run.ms);
    return run;
  };
  for (size_t i = 0; i < starters.size(); ++i) result.starters[i].warmup_ms = run_one(i, "warm-up").ms;
  for (size_t round = 0; round < req.rounds; ++round) {
    const std::string when = "round " + std::to_string(round + 1) + "/" + std::to_string(req.rounds);
    std::vector<std::string> names;
    for (size_t i : RoundOrder(starters.size(), round)) {
      StarterRun run = run_one(i, when);
      result.starters[i].runs_ms.push_back(run.ms);
      auto ns = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
      };
      result.starters[i].runs_clock_ns.emplace_back(ns(run.start), ns(run.stop));
      if (i == 0) result.qlaunch_phases.push_back(std::move(run.phases));
      names.push_back(starters[i]->name());
    }
    result.order.push_back(std::move(names));
  }
  return result;
}

}  // namespace qlaunch::launcher
