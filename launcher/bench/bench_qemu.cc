// The plain-QEMU starters of `qlaunch bench` (see launcher/bench/bench_starters.h): QEMU by hand with the
// argv `domxml-to-native --prealloc qemu` prints, timed from exec until the guest runs (qemu), or
// with the guest's memory cut to the minimum (floor) or allocated on demand (floor-sized), until it
// answers qmp_capabilities (bench_floor.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "launcher/bench/bench_floor.h"
#include "launcher/bench/bench_starters.h"
#include "launcher/bench/bench_support.h"
#include "launcher/host/qemu_spawn.h"
#include "launcher/host/qemu_user.h"
#include "launcher/host/uid_lease.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/preflight.h"
#include "launcher/lifecycle/start/start.h"
#include "launcher/lifecycle/start/start_qmp.h"
#include "qemu_cmd/planner.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using bench::Clock;
using bench::InterruptAction;
using bench::Left;
using bench::ThrowIfInterrupted;
using std::chrono::milliseconds;

namespace {

// ---- plain QEMU -------------------------------------------------------------------------------

// `start --user USER[:GROUP]` among the start options, so plain QEMU runs as the same user.
std::string UserOption(const std::vector<std::string>& options) {
  std::string user;
  for (size_t i = 0; i < options.size(); ++i) {
    if (options[i] == "--user" && i + 1 < options.size()) user = options[++i];
    else if (options[i].rfind("--user=", 0) == 0) user = options[i].substr(7);
  }
  return user;
}

// The directories the plan's file backends need and that do not exist yet (a hugetlbfs backend
// without memfd: <mount>/qlaunch/NAME), made as `start` makes them: a backend's own directory
// belongs to QEMU's user (0700) and goes after the run; shared parents stay (root's, 0755).
class MemPathDirs {
 public:
  MemPathDirs() = default;
  MemPathDirs(const MemPathDirs&) = delete;
  MemPathDirs& operator=(const MemPathDirs&) = delete;
  ~MemPathDirs() {
    for (auto it = own_.rbegin(); it != own_.rend(); ++it) {
      std::error_code ec;
      fs::remove_all(*it, ec);
    }
  }

  void Make(const qemu::LaunchPlan& plan, const std::vector<fs::path>& roots, const QemuUser& user) {
    std::set<fs::path> mem_paths;
    for (const auto& b : plan.backends) mem_paths.insert(fs::path(b.mem_path).lexically_normal());
    for (const fs::path& dir : MissingMemPathDirs(plan, roots)) {
      std::error_code ec;
      if (!fs::create_directory(dir, ec) || ec)
        throw std::runtime_error("cannot create mem-path directory " + dir.string() + ": " + ec.message());
      if (!mem_paths.count(dir)) continue;
      own_.push_back(dir);
      if ((user.change && ::chown(dir.c_str(), user.uid, user.gid) != 0) || ::chmod(dir.c_str(), 0700) != 0)
        throw std::runtime_error("cannot give " + dir.string() + " to " + user.user + ": " + std::strerror(errno));
    }
  }

 private:
  std::vector<fs::path> own_;
};

// QEMU creates its chardevs (the QMP socket) before its memory backends, so the socket appears
// early and the greeting only once the machine, with its preallocated memory, exists. Waits for
// the socket file in 1 ms steps (QmpClient::Connect's back-off grows to 50 ms, which would show
// in the time of a small guest), noticing a QEMU that dies meanwhile; then connects and reads the
// greeting.
std::unique_ptr<qemu::QmpClient> ConnectWhenListening(const fs::path& socket, QemuProcess& proc,
                                                      Clock::time_point deadline) {
  for (;;) {
    struct stat st {};
    if (::stat(socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) break;
    if (std::optional<std::string> how = proc.ExitDescription())
      throw std::runtime_error("QEMU " + *how + " before its QMP socket appeared");
    if (Clock::now() >= deadline) throw std::runtime_error("QMP socket " + socket.string() + " never appeared");
    std::this_thread::sleep_for(milliseconds(1));
  }
  return qemu::QmpClient::Connect(socket.string(), Left(deadline), /*wait_for_server=*/true);
}

// Untimed: QMP quit, then the wait until QEMU has exited (its memory is free only then); SIGKILL
// after 30 s.
void Quit(qemu::QmpClient& qmp, QemuProcess& proc) {
  try {
    qmp.Execute("quit", nullptr, std::chrono::seconds(10));
  } catch (const qemu::QmpTimeout&) {
    // QEMU may close the connection before its reply reaches us: it is quitting.
  }
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!proc.ExitDescription()) {
    if (Clock::now() >= deadline) {
      proc.Kill();
      return;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
}

enum class Kind { kQemu, kFloor, kSizedFloor };

const char* NameOf(Kind kind) {
  return kind == Kind::kQemu ? "qemu" : kind == Kind::kFloor ? "floor" : "floor-sized";
}

class QemuStarter : public Starter {
 public:
  // A floor: the domain's memory cut to the minimum (FloorDomain) or allocated on demand
  // (SizedFloorDomain), timed until QEMU answers qmp_capabilities.
  QemuStarter(const BenchConfig& cfg, const domain::DomainDef& domain, Kind kind, const std::string& dir_name)
      : cfg_(cfg), dir_(cfg.work_dir / dir_name), kind_(kind) {
    const domain::DomainDef def = kind == Kind::kFloor        ? FloorDomain(domain)
                                  : kind == Kind::kSizedFloor ? SizedFloorDomain(domain)
                                                              : domain;
    const numa::HostTopology host = LoadHost("");
    const qemu::QemuCaps caps = LoadCaps(PickEmulator(cfg.qemu, &def));
    user_ = ResolveQemuUser(UserOption(cfg.start_options), def);
    LeaseQemuUser(&user_, def, dir_);  // ids of its own, as `start` gives them; held by this bench
    qemu::PlanOptions popts = DefaultPlanOptions(def.name, qemu::PreallocMode::kQemu);
    popts.qmp_socket = (dir_ / "qmp.sock").string();
    popts.memory_backing_dir = (dir_ / "ram").string();
    plan_ = qemu::PlanLaunch(def, host, caps, popts);
    if (kind == Kind::kSizedFloor) plan_.argv = WithoutPrealloc(plan_.argv);
    for (const auto& [size, mount] : host.hugetlbfs_mounts) roots_.emplace_back(mount);
    roots_.push_back(dir_);
    // As `start` allows: 2 ms per MiB QEMU preallocates on top of the QMP timeout.
    uint64_t prealloc_bytes = 0;
    for (const auto& b : plan_.backends)
      if (b.prealloc == qemu::PreallocBy::kQemu) prealloc_bytes += b.size_bytes;
    timeout_ = QmpTimeoutFromEnv() + milliseconds((prealloc_bytes >> 20) * 2);

    // QEMU's user makes its QMP socket here (the work dir above is 0711: it may pass through).
    fs::create_directory(dir_);
    if ((user_.change && ::chown(dir_.c_str(), user_.uid, user_.gid) != 0) || ::chmod(dir_.c_str(), 0700) != 0)
      throw std::runtime_error("cannot give " + dir_.string() + " to " + user_.user + ": " + std::strerror(errno));
  }
  ~QemuStarter() override {
    if (user_.lease) ReleaseIds(dir_);
  }
  std::string name() const override { return NameOf(kind_); }
  bool floor() const { return kind_ != Kind::kQemu; }

  StarterRun Run() override {
    MemPathDirs dirs;
    dirs.Make(plan_, roots_, user_);
    const fs::path socket = dir_ / "qmp.sock", log = dir_ / "qemu.log";
    std::error_code ec;
    fs::remove(socket, ec);
    fs::remove(log, ec);
    SpawnSpec spec;
    spec.argv = plan_.argv;
    spec.log_file = log;
    if (user_.change) spec.drop = DropTo{user_.uid, user_.gid, user_.groups};

    ThrowIfInterrupted(cfg_.interrupt);
    const Clock::time_point t0 = Clock::now();
    std::unique_ptr<QemuProcess> proc = QemuProcess::Spawn(spec);
    InterruptAction kill(cfg_.interrupt, [p = proc.get()] { p->SendKill(); });
    try {
      const auto deadline = t0 + timeout_;
      std::unique_ptr<qemu::QmpClient> qmp = ConnectWhenListening(socket, *proc, deadline);
      if (floor()) {
        // QMP ready: the greeting can come before QEMU's main loop runs; the reply to
        // qmp_capabilities comes from it, once QEMU has finished its start-up.
        qmp->Execute("qmp_capabilities", nullptr, Left(deadline));
        const Clock::time_point answered = Clock::now();
        Quit(*qmp, *proc);
        return StarterRun::Between(t0, answered);
      }
      qmp->Execute("qmp_capabilities", nullptr, Left(deadline));
      qmp->Execute("cont", nullptr, Left(deadline));
      WaitRunning(*qmp, Left(deadline));  // as qlaunch start waits
      const Clock::time_point running = Clock::now();
      Quit(*qmp, *proc);
      return StarterRun::Between(t0, running);
    } catch (const std::exception& e) {
      const std::optional<std::string> how = proc->ExitDescription();  // before Kill: how it ended by itself
      proc->Kill();
      ThrowIfInterrupted(cfg_.interrupt);
      const std::string tail = LogTail(log, 8);
      throw std::runtime_error(std::string(floor() ? "QEMU " + name() + ": " : "plain QEMU: ") + std::string(e.what()) +
                               (how ? "; QEMU " + *how : "") +
                               (tail.empty() ? "" : "; its output ends with:\n" + tail));
    }
  }

 private:
  BenchConfig cfg_;
  fs::path dir_;
  QemuUser user_;
  qemu::LaunchPlan plan_;
  std::vector<fs::path> roots_;
  milliseconds timeout_{0};
  Kind kind_ = Kind::kQemu;
};

}  // namespace

std::unique_ptr<Starter> MakeQemuStarter(const BenchConfig& cfg, const domain::DomainDef& def) {
  return std::make_unique<QemuStarter>(cfg, def, Kind::kQemu, NameOf(Kind::kQemu));
}

std::unique_ptr<Starter> MakeFloorStarter(const BenchConfig& cfg, const domain::DomainDef& def,
                                          const std::string& dir_name) {
  return std::make_unique<QemuStarter>(cfg, def, Kind::kFloor, dir_name);
}

std::unique_ptr<Starter> MakeSizedFloorStarter(const BenchConfig& cfg, const domain::DomainDef& def) {
  return std::make_unique<QemuStarter>(cfg, def, Kind::kSizedFloor, NameOf(Kind::kSizedFloor));
}

}  // namespace qlaunch::launcher
