// The virsh starter of `qlaunch bench` (launcher/bench/bench_starters.h): `virsh create`, timed
// from fork to exit; then `virsh destroy`, and whether libvirt answers at all.
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "launcher/bench/bench_starters.h"
#include "launcher/bench/bench_support.h"
#include "launcher/host/qemu_spawn.h"

namespace qlaunch::launcher {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using bench::ThrowIfInterrupted;

std::vector<std::string> VirshArgv(const BenchConfig& cfg, std::initializer_list<std::string> args) {
  std::vector<std::string> argv = {"virsh", "-q", "-c", cfg.uri};
  argv.insert(argv.end(), args);
  return argv;
}

namespace {

class VirshStarter : public Starter {
 public:
  explicit VirshStarter(const BenchConfig& cfg) : cfg_(cfg) {}
  std::string name() const override { return "virsh"; }

  StarterRun Run() override {
    ChildRun create = RunChild(VirshArgv(cfg_, {"create", cfg_.domain_xml}), cfg_.work_dir, "virsh-create",
                               cfg_.interrupt);
    if (!create.ok()) {
      const bool interrupted = cfg_.interrupt && cfg_.interrupt->signal();
      Cleanup(interrupted ? milliseconds(2000) : milliseconds(0));
      ThrowIfInterrupted(cfg_.interrupt);
      throw std::runtime_error("virsh create " + create.Describe() + create.ErrTail());
    }
    ChildRun destroy = RunChild(VirshArgv(cfg_, {"destroy", cfg_.name}), cfg_.work_dir, "virsh-destroy", nullptr,
                                std::chrono::seconds(60));
    if (!destroy.ok()) {
      Cleanup(milliseconds(0));
      throw std::runtime_error("virsh destroy " + cfg_.name + " " + destroy.Describe() + destroy.ErrTail());
    }
    return StarterRun::Between(create.forked, create.exited);
  }

 private:
  // A create that failed or was interrupted may still leave a domain: libvirtd finishes a create
  // whose virsh went away. Destroys it while libvirt knows it (10 s at most); after an
  // interrupt, also waits `settle` for one to appear.
  void Cleanup(milliseconds settle) noexcept {
    try {
      const auto start = Clock::now(), deadline = start + std::chrono::seconds(10) + settle;
      while (Clock::now() < deadline) {
        ChildRun state = RunChild(VirshArgv(cfg_, {"domstate", cfg_.name}), cfg_.work_dir, "virsh-domstate", nullptr,
                                  std::chrono::seconds(30));
        if (state.ok()) {
          RunChild(VirshArgv(cfg_, {"destroy", cfg_.name}), cfg_.work_dir, "virsh-destroy", nullptr,
                   std::chrono::seconds(60));
        } else if (Clock::now() >= start + settle) {
          return;
        }
        std::this_thread::sleep_for(milliseconds(100));
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "qlaunch: warning: bench: cannot clean up libvirt's %s: %s\n", cfg_.name.c_str(), e.what());
    }
  }

  BenchConfig cfg_;
};

}  // namespace

std::unique_ptr<Starter> MakeVirshStarter(const BenchConfig& cfg) { return std::make_unique<VirshStarter>(cfg); }

std::optional<std::string> VirshUnreachable(const BenchConfig& cfg) {
  if (!FindProgram("virsh")) return "virsh is not installed";
  ChildRun r = RunChild(VirshArgv(cfg, {"uri"}), cfg.work_dir, "virsh-uri", cfg.interrupt, std::chrono::seconds(30));
  if (r.ok()) return std::nullopt;
  if (r.timed_out) return "virsh uri did not answer within 30 s";
  std::string why = LogTail(r.err_file, 1);
  if (why.rfind("error: ", 0) == 0) why.erase(0, 7);
  return why.empty() ? "virsh uri " + r.Describe() : why;
}

}  // namespace qlaunch::launcher
