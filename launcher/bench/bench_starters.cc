#include "launcher/bench/bench_starters.h"

#include "launcher/bench/bench_support.h"

#include "launcher/bench/bench_kernel.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "launcher/lifecycle/destroy.h"
#include "launcher/lifecycle/inputs.h"
#include "launcher/lifecycle/preflight.h"
#include "launcher/host/qemu_spawn.h"
#include "launcher/host/qemu_user.h"
#include "launcher/lifecycle/start.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/timings.h"
#include "numa/hugepage_sizes.h"
#include "numa/node_reader.h"
#include "numa/sysfs_files.h"
#include "qemu_cmd/planner.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using bench::InterruptAction;
using bench::Left;
using bench::MsSince;
using bench::ThrowIfInterrupted;

namespace {


int CreateOutput(const fs::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

bool ChildRun::ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

std::string ChildRun::Describe() const {
  if (timed_out) return "timed out";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) +
           (abbrev ? std::string(" (SIG") + abbrev + ")" : "");
  }
  return "ended with wait status " + std::to_string(status);
}

std::string ChildRun::ErrTail() const {
  std::string tail = LogTail(err_file, 8);
  return tail.empty() ? "" : "; its stderr ends with:\n" + tail;
}

std::optional<std::string> FindProgram(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
  }
  return std::nullopt;
}

ChildRun RunChild(const std::vector<std::string>& argv, const fs::path& dir, const std::string& tag,
                  StartInterrupt* interrupt, milliseconds timeout) {
  if (argv.empty()) throw std::invalid_argument("RunChild: empty argv");
  ThrowIfInterrupted(interrupt);
  // Resolved before the fork: the child only calls async-signal-safe functions.
  std::string exe = argv[0];
  if (exe.find('/') == std::string::npos) {
    std::optional<std::string> found = FindProgram(exe);
    if (!found) throw std::runtime_error(exe + ": command not found in $PATH");
    exe = *found;
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  ChildRun run;
  run.err_file = dir / (tag + ".err");
  const fs::path out_file = dir / (tag + ".out");
  struct Fds {
    int fd[3] = {-1, -1, -1};
    ~Fds() {
      for (int f : fd)
        if (f >= 0) ::close(f);
    }
  } fds;
  fds.fd[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fds.fd[0] < 0) throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  fds.fd[1] = CreateOutput(out_file);
  fds.fd[2] = CreateOutput(run.err_file);

  const Clock::time_point t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork for " + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    for (int i = 0; i < 3; ++i)
      if (::dup2(fds.fd[i], i) < 0) ::_exit(127);
    ::execv(exe.c_str(), cargv.data());
    const char* why = ::strerrordesc_np(errno);
    for (const char* s : {"cannot run ", exe.c_str(), ": ", why ? why : "?", "\n"})
      (void)!::write(2, s, std::strlen(s));
    ::_exit(127);
  }
  // SIGINT on the terminal reaches the child by itself; a signal sent to the bench alone is
  // passed on, so that qlaunch start (or virsh) cleans up as it would on a Ctrl-C.
  InterruptAction forward(interrupt, [pid] { ::kill(pid, SIGINT); });
  // A pidfd becomes readable the moment the child exits: the wait is as precise as a blocking
  // waitpid and can still time out.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  while (pidfd >= 0) {
    int wait_ms = -1;
    if (timeout.count() > 0) {
      wait_ms = static_cast<int>(Left(t0 + timeout).count());
      if (Clock::now() >= t0 + timeout) {
        ::kill(pid, SIGKILL);
        run.timed_out = true;
        break;
      }
    }
    pollfd p{pidfd, POLLIN, 0};
    int n = ::poll(&p, 1, wait_ms);
    if (n > 0 || (n < 0 && errno != EINTR)) break;
  }
  siginfo_t info{};
  while (::waitid(P_PID, pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  run.ms = MsSince(t0);
  // No more forwarding before the pid is reaped (after that it may be someone else's).
  forward.Clear();
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  if (pidfd >= 0) ::close(pidfd);
  run.out = ReadSmallFile(out_file).value_or("");
  return run;
}

std::vector<HugepageCount> ReadFreeHugepages(const fs::path& sys) {
  std::vector<HugepageCount> out;
  auto read_pools = [&out](const fs::path& dir, int node) {
    for (uint64_t bytes : numa::HugepageSizesIn(dir)) {
      const fs::path pool = dir / ("hugepages-" + std::to_string(bytes >> 10) + "kB");
      if (std::optional<uint64_t> free = numa::ReadNumberFile(pool / "free_hugepages"))
        out.push_back({node, bytes, *free});
    }
  };
  const fs::path node_dir = sys / "devices/system/node";
  std::error_code ec;
  if (fs::is_directory(node_dir, ec))
    for (unsigned id : numa::ReadNodeIds(node_dir))
      read_pools(node_dir / ("node" + std::to_string(id)) / "hugepages", static_cast<int>(id));
  if (out.empty()) read_pools(sys / "kernel/mm/hugepages", -1);
  return out;
}

void WaitHugepagesBack(const std::vector<HugepageCount>& baseline, milliseconds timeout,
                       const StartInterrupt& interrupt, const std::string& after, const fs::path& sys) {
  // At least as many free as before, not exactly: pages someone else gives back meanwhile must
  // not fail the bench; ours missing must.
  auto short_pools = [&] {
    std::vector<HugepageCount> now = ReadFreeHugepages(sys);
    std::string missing;
    for (const HugepageCount& want : baseline) {
      auto it = std::find_if(now.begin(), now.end(), [&](const HugepageCount& c) {
        return c.node == want.node && c.page_bytes == want.page_bytes;
      });
      const uint64_t free = it == now.end() ? 0 : it->free;
      if (free >= want.free) continue;
      missing += std::string(missing.empty() ? "" : ", ") +
                 (want.node < 0 ? std::string("host") : "node " + std::to_string(want.node)) + " " +
                 std::to_string(want.page_bytes >> 10) + " kB pages: " + std::to_string(free) + " free, " +
                 std::to_string(want.free) + " before";
    }
    return missing;
  };
  const auto deadline = Clock::now() + timeout;
  for (std::string missing = short_pools(); !missing.empty(); missing = short_pools()) {
    interrupt.ThrowIfInterrupted();
    if (Clock::now() >= deadline)
      throw std::runtime_error("hugepages not back within " + std::to_string(timeout.count() / 1000) + " s after " +
                               after + " (" + missing + "): is a process of that run still alive, or did " +
                               "something else take them?");
    std::this_thread::sleep_for(milliseconds(5));
  }
}

namespace {

// ---- qlaunch start ----------------------------------------------------------------------------

// timings_ms of `qlaunch start --json`, every key in its order (new phases are kept too).
Phases ParseTimings(const std::string& out) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("qlaunch start --json printed no JSON (" + std::string(e.what()) + "): " + out);
  }
  Phases phases;
  if (j.is_object() && j.contains("timings_ms") && j["timings_ms"].is_object())
    for (const auto& [key, value] : j["timings_ms"].items())
      if (value.is_number()) phases.emplace_back(key, value.get<double>());
  if (phases.empty()) throw std::runtime_error("qlaunch start --json printed no timings_ms: " + out);
  // A JSON object has its keys sorted by name: back in the order start measures them in, the
  // phases this binary does not know (yet) after those, total last.
  auto rank = [](const std::string& key) {
    for (size_t i = 0; i < kPhaseCount; ++i)
      if (key == PhaseName(static_cast<Phase>(i))) return static_cast<Phase>(i) == Phase::kTotal ? kPhaseCount + 1 : i;
    return kPhaseCount;
  };
  std::stable_sort(phases.begin(), phases.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  return phases;
}

// Destroys the domain if a start left it running; never throws (a failure is already being
// reported).
void DestroyIfRunning(const std::string& name) noexcept {
  try {
    DestroyDomain(StateDir(), name);
  } catch (const NotRunningError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qlaunch: warning: bench: cannot destroy %s: %s\n", name.c_str(), e.what());
  }
}

class QlaunchStarter : public Starter {
 public:
  explicit QlaunchStarter(const BenchConfig& cfg) : cfg_(cfg) {}
  std::string name() const override { return "qlaunch"; }

  StarterRun Run() override {
    // This very binary, even if the file was replaced meanwhile.
    std::vector<std::string> argv = {"/proc/self/exe", "start", "--json"};
    if (!cfg_.qemu.empty()) argv.insert(argv.end(), {"--qemu", cfg_.qemu});
    argv.insert(argv.end(), cfg_.start_options.begin(), cfg_.start_options.end());
    argv.push_back(cfg_.domain_xml);
    ChildRun child = RunChild(argv, cfg_.work_dir, "qlaunch-start", cfg_.interrupt);
    StarterRun run{child.ms, {}};
    try {
      if (!child.ok()) throw std::runtime_error("qlaunch start " + child.Describe() + child.ErrTail());
      run.phases = ParseTimings(child.out);
    } catch (const std::exception&) {
      DestroyIfRunning(cfg_.name);
      ThrowIfInterrupted(cfg_.interrupt);
      throw;
    }
    DestroyDomain(StateDir(), cfg_.name);
    return run;
  }

 private:
  BenchConfig cfg_;
};

// ---- virsh create -----------------------------------------------------------------------------

std::vector<std::string> VirshArgv(const BenchConfig& cfg, std::initializer_list<std::string> args) {
  std::vector<std::string> argv = {"virsh", "-q", "-c", cfg.uri};
  argv.insert(argv.end(), args);
  return argv;
}

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
    return {create.ms, {}};
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

// ---- the bench --------------------------------------------------------------------------------

// The bench would destroy a domain of that name: refuse one that runs already.
void CheckNotRunning(const BenchConfig& cfg, bool libvirt) {
  try {
    const ProcessRef qemu = RunningQemu(StateDir(), cfg.name);
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

BenchWorkDir::BenchWorkDir() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  // sun_path holds 107 bytes: keep "<dir>/qemu/qmp.sock" well inside it.
  if (ec || base.string().size() > 60) base = "/tmp";
  std::string tmpl = (base / "qlaunch-bench-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot create a temporary directory " + tmpl + ": " + std::strerror(errno));
  path_ = tmpl;
  ::chmod(path_.c_str(), 0711);
}

BenchWorkDir::~BenchWorkDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::unique_ptr<Starter> MakeQlaunchStarter(const BenchConfig& cfg) { return std::make_unique<QlaunchStarter>(cfg); }
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
  if (req.kernel) {
    if (std::optional<std::string> ref = FindPopulateRef(req.populate_ref)) {
      starters.push_back(MakeKernelStarter(cfg, def, *ref));
    } else {
      const std::string why = req.populate_ref.empty() ? "populate_ref is not installed beside qlaunch"
                                                       : req.populate_ref + " is not an executable file";
      std::fprintf(stderr, "qlaunch: warning: kernel: %s: the kernel reference skipped\n", why.c_str());
      result.skipped.emplace_back("kernel", why);
    }
  }
  for (const auto& s : starters) result.starters.push_back({s->name(), 0, {}});
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
      if (i == 0) result.qlaunch_phases.push_back(std::move(run.phases));
      names.push_back(starters[i]->name());
    }
    result.order.push_back(std::move(names));
  }
  return result;
}

}  // namespace qlaunch::launcher
