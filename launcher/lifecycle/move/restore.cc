#include "launcher/lifecycle/move/restore.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "launcher/host/qemu_spawn.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/move/save_file.h"
#include "launcher/lifecycle/session/destroy.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/start/start.h"
#include "launcher/lifecycle/start/start_interrupt.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// QEMU's status once it is no longer inmigrate; throws when QEMU goes (7.2 exits when it cannot
// load the stream) or `timeout` passes, or on a signal (also one that came while QEMU answered).
std::string WaitLoaded(qemu::QmpClient& qmp, const StartInterrupt& interrupt, std::chrono::milliseconds qmp_timeout,
                       std::chrono::milliseconds timeout) {
  const auto begin = Clock::now();
  for (;;) {
    interrupt.ThrowIfInterrupted();
    const std::string status = qmp.Execute("query-status", nullptr, qmp_timeout).value("status", "");
    interrupt.ThrowIfInterrupted();
    if (status != "inmigrate") return status;
    if (Clock::now() - begin > timeout)
      throw std::runtime_error("QEMU did not load the stream within " + std::to_string(timeout.count() / 1000) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

RestoreReport RestoreDomain(const RestoreOptions& o) {
  const auto begin = Clock::now();
  RestoreReport r;
  r.file = o.file;
  Fd file{::open(o.file.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) throw std::runtime_error("cannot restore from " + o.file + ": " + std::strerror(errno));
  const SaveHeader header = ReadSaveHeader(file.fd, o.file);
  if (::lseek(file.fd, static_cast<off_t>(header.stream_offset), SEEK_SET) < 0)
    throw std::runtime_error("cannot restore from " + o.file + ": seek: " + std::strerror(errno));

  const StateDir state(o.state_root.empty() ? DefaultStateRoot() : o.state_root);
  const std::chrono::milliseconds qmp_timeout = o.qmp_timeout.count() > 0 ? o.qmp_timeout : QmpTimeoutFromEnv();
  // SIGINT/SIGTERM until the guest is as it was saved: the restore fails and the domain goes (FILE
  // stays). Held across StartDomain (which takes its own inside it: they nest), so a signal just as
  // the start returns is not the default action that would leave a half-loaded domain behind.
  StartInterrupt interrupt;
  {
    StartOptions so;
    so.domain_xml = o.file + " (its saved XML)";  // for diagnostics; the XML is the header's
    so.domain_xml_text = header.xml;
    so.progress = o.progress;
    so.state_root = state.root();
    so.qmp_timeout = qmp_timeout;
    so.incoming_fd = file.fd;
    const auto start_begin = Clock::now();
    r.start = StartDomain(so);  // on failure it has released all it made
    r.start_ms = MsSince(start_begin);
    r.fill_ms = r.start.timings.Ms(Phase::kPrealloc);
  }
  ::close(file.fd);  // QEMU has its own copy
  file.fd = -1;

  const std::string& name = r.start.name;
  const fs::path dir = state.DomainDir(name);
  const auto load_begin = Clock::now();
  try {
    interrupt.ThrowIfInterrupted();  // came as the start returned
    auto qmp = qemu::QmpClient::Connect((dir / "qmp.sock").string(), qmp_timeout, /*wait_for_server=*/false);
    qmp->Execute("qmp_capabilities", nullptr, qmp_timeout);
    r.state = WaitLoaded(*qmp, interrupt, qmp_timeout, o.load_timeout);
    r.load_ms = MsSince(load_begin);
    if (r.state == "paused" && header.ran) {
      qmp->Execute("cont", nullptr, qmp_timeout);
      r.state = qmp->Execute("query-status", nullptr, qmp_timeout).value("status", "");
    }
    interrupt.ThrowIfInterrupted();  // the last moment the restore can still be undone
    if (r.state != "running" && r.state != "paused")
      throw std::runtime_error("QEMU's status after loading is " + r.state);
  } catch (const std::exception& e) {
    std::string msg = "restore of domain " + name + " from " + o.file + " failed: " + e.what() +
                      "; the domain was destroyed, " + o.file + " is left as it was";
    const std::string tail = LogTail(dir / "qemu.log");
    if (!tail.empty()) msg += "\nqemu.log:\n" + tail;
    try {
      DestroyDomain(state, name);
    } catch (const NotRunningError&) {  // QEMU is gone already; its stale entry went with the check
    }
    throw std::runtime_error(msg);
  }
  // From here on a signal is recorded and ignored: the guest is back.
  SettleIncoming(state, name);
  r.wall_ms = MsSince(begin);
  return r;
}

json ToJson(const RestoreReport& r) {
  json j = ToJson(r.start);
  json out = {{"name", r.start.name}, {"pid", r.start.pid},      {"file", r.file},       {"state", r.state},
              {"start_ms", r.start_ms}, {"fill_ms", r.fill_ms}, {"load_ms", r.load_ms}, {"wall_ms", r.wall_ms}};
  out["prealloc"] = j["prealloc"];
  out["timings_ms"] = j["timings_ms"];
  return out;
}

}  // namespace qlaunch::launcher
