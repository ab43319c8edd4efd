// Runs one verb sequence (verb_model.h) against the real qlaunch on a guest that really boots
// (sequence_guest.h), and checks the invariants after every step:
//   - the verb's exit: 0 when the model accepts it, 1 when it refuses it; a refusal leaves the
//     domain exactly as it was (the same QEMU, the same live XML, the same pages);
//   - where the domain is: listed on the model's host in the model's state, nothing on the other;
//   - the guest: counting on when running (and its buffer's MD5 summed again after the step is the
//     first one: its memory unchanged, no second boot), not counting when paused;
//   - the live XML (`dumpxml`) against the model and against what QEMU reports
//     (sequence_checks.h);
//   - hugepages: free = the pool - what the domain's memfds hold (and what other hugetlb files
//     hold: someone's domain started by hand), and the domain's hold its memory;
//   - nothing leaked: one QEMU (none once saved or destroyed), no memfd of the domain held by any
//     other process, no entry in a state root but the domain's.
// The first failed check ends the sequence; the report says which step, what, and why (the
// verb's output, the end of each qemu.log and of the console). Everything is destroyed and checked
// gone at the end, pass or fail, and every image is root's again.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/hotplug_guest.h"
#include "support/verb_model.h"

namespace qlaunch::testing::seq {

// The ground a runner stands on (the test's temporary directory, its two state roots).
struct RunnerHost {
  std::filesystem::path work;            // each run's files go to work/run-N
  std::filesystem::path root_a, root_b;  // QLAUNCH_STATE_DIR of host A and host B
  std::filesystem::path cache;           // QLAUNCH_CACHE_DIR
  HotplugGuest boot;                     // kernel and initramfs (sequence_guest.h)
};

struct RunReport {
  Sequence steps;
  bool passed = true;
  size_t failed_at = 0;   // the failing step (steps.size(): the boot or the final clean-up)
  std::string signature;  // "VERB: CHECK" of the failure: what a shrunk sequence must fail the same way
  std::string failure;    // what failed, the verb's output, the logs
  std::map<std::string, size_t> verbs;  // steps run per verb ("setvcpus", "setvcpus (refused)", ...)
  double seconds = 0;
  std::string Summary() const;  // "PASS (12.3 s)" or "FAIL at step 3 (save): ..." (first line)
};

class SequenceRunner {
 public:
  explicit SequenceRunner(RunnerHost host) : host_(std::move(host)) {}
  RunReport Run(const Sequence& seq);
  size_t runs() const { return runs_; }

 private:
  RunnerHost host_;
  size_t runs_ = 0;
};

}  // namespace qlaunch::testing::seq
