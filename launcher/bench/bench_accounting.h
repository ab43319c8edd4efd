// The phases of one `qlaunch start --json`, completed from outside by `qlaunch bench`, pure.
//
// Inside, start reports its phases from its own first initialiser to its last mark, and estimates
// the start-up before that (process_clock.h). The bench knows more: when it forked the child and
// when the child had exited, on the same monotonic clock as start's clock_ns. So:
//   startup      fork -> start's entry (replaces start's own estimate)
//   exit         start's last mark -> the bench saw the exit (printing the report, main's return,
//                static destructors, the kernel tearing the process down)
//   total        fork -> exit: the very time the bench reports for the run
//   unaccounted  total minus the sum of every phase: what no phase holds (a gap between marks,
//                or phases that overlap when negative); it must stay well under a millisecond
//   running, populated   moved by the difference between the outside and inside start-up, so
//                they count from the fork too
#pragma once

#include <cstdint>
#include <string>

#include "launcher/bench/bench_stats.h"

namespace qlaunch::launcher {

// Keys of timings_ms that are no phase: the sums and moments.
bool IsPhaseKey(const std::string& key);

// `phases`: timings_ms as parsed; entry_ns, end_ns: start's clock_ns; forked_ns, exited_ns: the
// bench's fork and the exit it saw (all CLOCK_MONOTONIC ns). Returns the phases with startup,
// exit, total, unaccounted, running and populated as above, in the same order ("exit" after
// the last phase, before total). Throws std::invalid_argument when the clocks are out of order
// (entry before the fork, the end after the exit).
Phases AccountFromOutside(const Phases& phases, int64_t entry_ns, int64_t end_ns, int64_t forked_ns,
                          int64_t exited_ns);

}  // namespace qlaunch::launcher
