// When this process began, as far as it can tell, for the phases of a start that cover the
// process's whole life (timings.h).
//
//   Entry()           the moment qlaunch's own first static initialiser ran (a constructor of
//                     priority 101, before every other initialiser of the executable; the shared
//                     libraries' initialisers and the dynamic loader ran before it).
//   StartupEstimate() the time from the fork to Entry(), as this process sees it: the CPU time
//                     plus the run-queue wait of its main thread until Entry(): the thread's CPU
//                     clock and /proc/self/schedstat (the kernel counts both from the fork on).
//                     Time blocked in that stretch (reading the binary from a cold disk) is not in
//                     it; the CPU time alone where the file cannot be read. `qlaunch bench`
//                     measures the same stretch from outside, from its fork to Entry() on the
//                     shared monotonic clock.
//   EntryNs()         Entry() as nanoseconds of CLOCK_MONOTONIC (= std::chrono::steady_clock), the
//                     clock every process of the host shares: the bench compares it with its fork.
#pragma once

#include <chrono>
#include <cstdint>

namespace qlaunch::launcher {

struct ProcessClock {
  using Clock = std::chrono::steady_clock;
  static Clock::time_point Entry();
  static Clock::duration StartupEstimate();
  static int64_t EntryNs();
};

// "run_ns wait_ns slices" (the text of /proc/PID/schedstat) and the thread's CPU clock `cpu` ->
// max(run, cpu) + wait; `cpu` alone when the text is not that (exposed for its test). The kernel
// brings schedstat's run up to date only at a tick or a switch, so a process that has not been
// off its CPU since the fork can read 0 there (a CI run saw a start whose startup was 0); the CPU
// clock is exact.
std::chrono::nanoseconds StartupFromSchedstat(const char* text, std::chrono::nanoseconds cpu);

}  // namespace qlaunch::launcher
