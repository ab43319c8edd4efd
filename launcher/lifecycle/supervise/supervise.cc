#include "launcher/lifecycle/supervise/supervise.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "launcher/lifecycle/session/destroy.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
constexpr std::chrono::milliseconds kQmpTimeout{5000};

std::atomic<int> g_signal{0};
extern "C" void OnTerm(int sig) { g_signal.store(sig); }

class Supervisor {
 public:
  Supervisor(const StateDir& state, const std::string& name, const domain::Lifecycle& lc, const SuperviseOptions& o)
      : state_(state), name_(name), lc_(lc), opts_(o) {}

  int Run() {
    qemu_ = RunningQemu(state_, name_);
    qmp_ = qemu::QmpClient::Connect((state_.DomainDir(name_) / "events.sock").string(), kQmpTimeout,
                                    /*wait_for_server=*/false);
    qmp_->Execute("qmp_capabilities", nullptr, kQmpTimeout);
    Log("running", "", {{"pid", qemu_.pid}});
    NotifyReady();
    std::optional<Clock::time_point> powerdown_deadline;
    for (;;) {
      if (int sig = g_signal.exchange(0); sig && !powerdown_deadline) {
        const char* sname = sig == SIGINT ? "SIGINT" : "SIGTERM";
        if (opts_.shutdown_timeout.count() == 0) return Destroy(kRunTimedOut, std::string(sname) + ", --shutdown-timeout 0");
        Log("shutdown", std::string(sname) + ": ACPI power button, destroy after " +
                            std::to_string(opts_.shutdown_timeout.count()) + " ms", {});
        try {
          qmp_->Execute("system_powerdown", nullptr, kQmpTimeout);
        } catch (const qemu::QmpError&) {
        }
        powerdown_deadline = Clock::now() + opts_.shutdown_timeout;
      }
      if (powerdown_deadline && Clock::now() >= *powerdown_deadline)
        return Destroy(kRunTimedOut, "the guest did not power off within the shutdown timeout");
      std::optional<json> ev;
      try {
        ev = qmp_->NextEvent(std::chrono::milliseconds(100));
      } catch (const qemu::QmpClosed&) {
        return Gone();
      }
      if (!ev) continue;
      if (std::optional<int> done = Handle(*ev)) return *done;
    }
  }

 private:
  // One QMP event; an exit status when the supervision is over.
  std::optional<int> Handle(const json& ev) {
    const std::string name = ev.value("event", "");
    const json data = ev.value("data", json::object());
    if (name == "SHUTDOWN") {
      const std::string reason = data.value("reason", "");
      if (reason == "guest-reset")  // -no-reboot: on_reboot='destroy'
        return Destroy(kRunPoweredOff, "the guest rebooted and <on_reboot> is destroy");
      if (!data.value("guest", false)) return std::nullopt;  // a host-side quit (destroy): QEMU goes
      return Act(lc_.on_poweroff, "on_poweroff", kRunPoweredOff, "the guest powered off");
    }
    if (name == "MIGRATION") {  // only with the "events" capability, which `qlaunch migrate` sets
      const std::string status = data.value("status", "");
      if (status == "completed" || status == "failed" || status == "cancelled") Log("migration", status, data);
      // Completed on both ends; a destination runs on (running or paused), a source is stopped: in
      // finish-migrate until QEMU's migration thread has cleaned up after the event, in postmigrate
      // after (it says "completed" between the two: asking for postmigrate alone lost that race).
      if (status == "completed") {
        try {
          const std::string run_state = qmp_->Execute("query-status", nullptr, kQmpTimeout).value("status", "");
          migrated_ = run_state == "postmigrate" || run_state == "finish-migrate";
        } catch (const qemu::QmpError&) {
          migrated_ = true;  // gone at once: `migrate` quit the source
        }
      }
      return std::nullopt;
    }
    if (name == "GUEST_PANICKED") return Act(lc_.on_crash, "on_crash", kRunCrashed, "the guest crashed");
    if (name == "RESET" || name == "STOP" || name == "RESUME" || name == "POWERDOWN")
      Log(ToLower(name), "", data);
    return std::nullopt;
  }

  std::optional<int> Act(const std::string& action, const char* element, int code, const std::string& what) {
    Log("action", what + ": <" + std::string(element) + "> " + action, {{"action", action}});
    if (action == "destroy") return Destroy(code, what);
    if (action == "restart") {
      qmp_->Execute("system_reset", nullptr, kQmpTimeout);
      qmp_->Execute("cont", nullptr, kQmpTimeout);
      return std::nullopt;
    }
    return std::nullopt;  // preserve: QEMU stays (paused), we keep watching
  }

  int Destroy(int code, const std::string& why) {
    qmp_.reset();
    try {
      DestroyResult r = DestroyDomain(state_, name_);
      Log("destroyed", why, {{"pid", r.pid}, {"how", r.how}, {"exit", code}});
    } catch (const NotRunningError&) {
      Log("gone", why, {{"exit", code}});
    }
    return code;
  }

  // QMP closed: QEMU ended without us (or, after a migration, `qlaunch migrate` ended it).
  int Gone() {
    qmp_.reset();
    for (int i = 0; i < 200 && ProcessAlive(qemu_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    state_.WithLock([&] { state_.RemoveIfStale(name_); });
    if (migrated_) {
      Log("migrated", "the domain runs elsewhere now; QEMU (pid " + std::to_string(qemu_.pid) + ") ended here",
          {{"exit", kRunMigrated}});
      return kRunMigrated;
    }
    Log("qemu-ended", "QEMU (pid " + std::to_string(qemu_.pid) + ") ended; its state was released",
        {{"exit", kRunQemuDied}});
    return kRunQemuDied;
  }

  static std::string ToLower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  void Log(const std::string& event, const std::string& text, const json& extra) const {
    if (opts_.json) {
      json j = extra;
      j["domain"] = name_;
      j["event"] = event;
      if (!text.empty()) j["message"] = text;
      std::fprintf(stderr, "%s\n", j.dump().c_str());
    } else {
      std::fprintf(stderr, "qlaunch run: %s: %s%s%s\n", name_.c_str(), event.c_str(), text.empty() ? "" : ": ",
                   text.c_str());
    }
  }

  const StateDir& state_;
  const std::string name_;
  const domain::Lifecycle lc_;
  const SuperviseOptions opts_;
  ProcessRef qemu_;
  bool migrated_ = false;  // a MIGRATION event said completed: QEMU ends because the guest left
  std::unique_ptr<qemu::QmpClient> qmp_;
};

}  // namespace

void InstallRunSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnTerm;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGHUP, SIG_IGN);
}

int Supervise(const StateDir& state, const std::string& name, const domain::Lifecycle& lifecycle,
              const SuperviseOptions& opts) {
  return Supervisor(state, name, lifecycle, opts).Run();
}

void NotifyReady() {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return;
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = std::min(std::strlen(path), sizeof addr.sun_path - 1);
  std::memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  std::string msg = "READY=1\nMAINPID=" + std::to_string(::getpid()) + "\n";
  ::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&addr),
           static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  ::close(fd);
}

}  // namespace qlaunch::launcher
