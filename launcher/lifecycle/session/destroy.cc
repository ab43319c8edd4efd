#include "launcher/lifecycle/session/destroy.h"

#include <signal.h>

#include <thread>

#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace {

using Clock = std::chrono::steady_clock;

bool WaitGone(const ProcessRef& ref, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (ProcessAlive(ref)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Asks QEMU to quit over QMP. Returns false when QMP could not be used at all.
bool Quit(const std::string& socket, std::chrono::milliseconds timeout) {
  std::unique_ptr<qemu::QmpClient> qmp;
  try {
    qmp = qemu::QmpClient::Connect(socket, timeout);
    qmp->Execute("qmp_capabilities", nullptr, timeout);
  } catch (const std::exception&) {
    return false;
  }
  try {
    qmp->Execute("quit", nullptr, timeout);
  } catch (const qemu::QmpTimeout&) {
    // QEMU may close the connection before its reply reaches us: it is quitting.
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace

DestroyResult DestroyDomain(const StateDir& state, const std::string& name, const DestroyOptions& opts) {
  const ProcessRef qemu = RunningQemu(state, name, Verb::kDestroy);
  DestroyResult result{qemu.pid, ""};
  if (Quit((state.DomainDir(name) / "qmp.sock").string(), opts.qmp_timeout) && WaitGone(qemu, opts.quit_wait)) {
    result.how = "quit";
  } else {
    if (ProcessAlive(qemu)) ::kill(qemu.pid, SIGTERM);
    if (WaitGone(qemu, opts.term_wait)) {
      result.how = "SIGTERM";
    } else {
      if (ProcessAlive(qemu)) ::kill(qemu.pid, SIGKILL);
      if (!WaitGone(qemu, opts.kill_wait))
        throw std::runtime_error("domain " + name + ": QEMU (pid " + std::to_string(qemu.pid) +
                                 ") is still alive after SIGKILL");
      result.how = "SIGKILL";
    }
  }
  state.RemoveIfPid(name, qemu);
  return result;
}

}  // namespace qlaunch::launcher
