// The pure domain pipeline qlaunch runs before it touches the host, as one function for the
// fuzzer (tests/fuzz/domain_pipeline_fuzz.cc) and for the replay test that keeps every input
// the fuzzer ever crashed on (tests/fuzz_replay_test.cc):
//
//   bytes -> ParseDomainXml -> ValidateDomain -> PlanLaunch (each fixture caps x each
//   --prealloc mode, on the four-node-cpuless fixture host) -> argv + plan JSON
//
// Bad input may end in DiagnosticError / std::runtime_error (that is the point of the
// pipeline); anything else escaping, a crash, or a broken invariant of the result is a bug.
// Invariants are reported as PipelineBug (a std::logic_error, so nothing treats it as an
// ordinary input error).
#pragma once

#include <filesystem>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"

namespace qlaunch::testing {

struct PipelineInputs {
  numa::HostTopology host;             // tests/fixtures/hosts/four-node-cpuless
  std::vector<qemu::QemuCaps> caps;    // tests/fixtures/caps/*.json (QEMU 7.2 and 5.2)
};

// Reads the fixtures under `source_dir` (the repository root). Throws std::runtime_error.
PipelineInputs LoadPipelineInputs(const std::filesystem::path& source_dir);

class PipelineBug : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// How far an input got.
enum class PipelineOutcome { kParseError, kInvalid, kPlanError, kPlanned };
const char* ToString(PipelineOutcome o);

// Runs the pipeline; kPlanned when at least one (caps, mode) combination planned.
PipelineOutcome RunDomainPipeline(std::string_view xml, const PipelineInputs& in);

// How many times each invariant really ran, over every RunDomainPipeline call of this process
// so far: an invariant that never ran checked nothing (the replay test and scripts/fuzz fail then).
struct InvariantCounts {
  uint64_t diagnostics = 0;      // CheckDiagnostics: a diagnostic list was checked
  uint64_t plan = 0;             // CheckPlan: a plan's argv was read back
  uint64_t injection = 0;        // CheckNoInjection: argv and defanged twin compared key by key
  uint64_t injection_skipped = 0;  // ... not compared: the twin planned other options, or not at all
};
InvariantCounts InvariantCountsSoFar();
// "diagnostics=N plan=N injection=N injection_skipped=N"
std::string ToString(const InvariantCounts& c);

}  // namespace qlaunch::testing
