// libFuzzer target: arbitrary bytes through parse -> validate -> plan -> render
// (tests/fuzz/domain_pipeline.h). Built only with -DQLAUNCH_FUZZ=ON and clang; run by
// scripts/fuzz, whose crash inputs go to tests/fuzz/regressions/ and are replayed by the
// ordinary test suite forever after (tests/fuzz_replay_test.cc). At exit it prints how often
// each invariant ran ("pipeline invariants: diagnostics=N plan=N injection=N ..."), which
// scripts/fuzz shows and fails on when one of them never ran.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz/domain_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const qlaunch::testing::PipelineInputs inputs = qlaunch::testing::LoadPipelineInputs(QLAUNCH_SOURCE_DIR);
  static const int printed_at_exit = std::atexit([] {
    std::fprintf(stderr, "pipeline invariants: %s\n",
                 qlaunch::testing::ToString(qlaunch::testing::InvariantCountsSoFar()).c_str());
  });
  (void)printed_at_exit;
  qlaunch::testing::RunDomainPipeline(std::string_view(reinterpret_cast<const char*>(data), size), inputs);
  return 0;
}
