// How `qlaunch start` fails (launcher/lifecycle/start/start.cc): the fault points the tests use to fail
// it at each phase, and the message of a start that failed once QEMU was spawned.
#pragma once

#include <filesystem>
#include <string>

#include "launcher/host/qemu_spawn.h"
#include "launcher/lifecycle/start/start_interrupt.h"

namespace qlaunch::launcher {

// Testing aid: $QLAUNCH_FAULT=<phase> makes the start fail at that point as if the real failure
// had happened there, so tests can check that every failure path leaves nothing behind. The
// QEMU, once spawned, is killed (SIGKILL, reaped) first; then the start throws and takes its
// ordinary failure path. Phases: preflight (state dir claimed, mem-path dirs made, nothing
// spawned), spawn (QEMU spawned, launcher memfds populating), qmp (QMP greeted), prealloc
// (QEMU's own preallocation done, the launcher's still running), cont (just before 'cont'),
// running (--run-early only: the guest runs, the launcher's population is still under way).
// Any other value fails the start at the first point.
void FaultPoint(const char* phase, QemuProcess* qemu_proc);

// The message of a start that failed once QEMU was spawned: why QEMU ended (with its log), or
// that a signal stopped us, or the error itself.
std::string FailureMessage(const std::string& error, const std::string& name, const StartInterrupt& interrupt,
                           QemuProcess* qemu_proc, const std::filesystem::path& log);

}  // namespace qlaunch::launcher
