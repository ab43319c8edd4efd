#include "launcher/lifecycle/start/start_failure.h"


#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

void FaultPoint(const char* phase, QemuProcess* qemu_proc) {
  const char* fault = std::getenv("QLAUNCH_FAULT");
  if (!fault || !*fault) return;
  static constexpr const char* kPhases[] = {"preflight", "spawn", "qmp", "prealloc", "cont", "running"};
  bool known = false;
  for (const char* p : kPhases) known |= std::strcmp(fault, p) == 0;
  if (known && std::strcmp(fault, phase) != 0) return;
  if (qemu_proc) qemu_proc->Kill();
  throw std::runtime_error(known ? std::string("fault injected at phase ") + phase + " (QLAUNCH_FAULT)"
                                 : std::string("QLAUNCH_FAULT=") + fault +
                                       ": unknown phase (preflight, spawn, qmp, prealloc, cont or running)");
}

std::string FailureMessage(const std::string& error, const std::string& name, const StartInterrupt& interrupt,
                           QemuProcess* qemu_proc, const fs::path& log) {
  if (int sig = interrupt.signal()) {
    return "start of domain " + name + " " + InterruptedBy(sig) +
           "; QEMU was killed and everything it held released";
  }
  if (qemu_proc) {
    // QEMU may be on its way out (the error is often the closed QMP socket): give it a moment.
    std::optional<std::string> ended;
    for (int i = 0; i < 50 && !(ended = qemu_proc->ExitDescription()); ++i)
      std::this_thread::sleep_for(milliseconds(10));
    if (ended) {
      std::string msg = "QEMU " + *ended + " while starting domain " + name + " (" + error + ")";
      std::string tail = LogTail(log);
      msg += tail.empty() ? "; " + log.string() + " is empty" : "; the end of " + log.string() + ":\n" + tail;
      return msg;
    }
  }
  return error;
}

}  // namespace qlaunch::launcher
