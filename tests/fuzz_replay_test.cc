// The fuzzer's pipeline (tests/fuzz/domain_pipeline.h), compiled normally, over every input the
// fuzzer ever crashed on (tests/fuzz/regressions/, kept forever) and every seed scripts/fuzz
// starts from. None may crash, throw anything but an input error (DiagnosticError,
// std::runtime_error) or break an invariant of the plan (PipelineBug).
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/domain_pipeline.h"
#include "support/libvirt_corpus.h"
#include "support/slurp.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = QLAUNCH_SOURCE_DIR;

// Regular files under `dir` (recursively), sorted; only *.xml when xml_only.
std::vector<fs::path> FilesUnder(const fs::path& dir, bool xml_only) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && (!xml_only || it->path().extension() == ".xml")) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

const PipelineInputs& Inputs() {
  static const PipelineInputs inputs = LoadPipelineInputs(kSource);
  return inputs;
}

// Runs one file; a failure names it.
PipelineOutcome Replay(const fs::path& file, const PipelineInputs& inputs = Inputs()) {
  try {
    return RunDomainPipeline(Slurp(file), inputs);
  } catch (const PipelineBug& e) {
    ADD_FAILURE() << file << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << file << ": escaped the pipeline: " << e.what();
  }
  return PipelineOutcome::kParseError;
}

TEST(FuzzReplay, EveryRegressionInputStaysFixed) {
  std::vector<fs::path> files;
  for (const fs::path& f : FilesUnder(kSource / "tests/fuzz/regressions", false))
    if (f.filename() != "README.md") files.push_back(f);
  ASSERT_FALSE(files.empty()) << "tests/fuzz/regressions/ holds the fuzzer's crash inputs; it is never emptied";
  for (const fs::path& f : files) Replay(f);
}

TEST(FuzzReplay, EverySeedGoesThroughThePipeline) {
  std::map<std::string, int> outcomes;
  size_t seeds = 0;
  std::vector<fs::path> files;
  for (const fs::path& dir : {kSource / "examples", kSource / "tests/fixtures/domains", kSource / "tests/fixtures/differential"})
    for (const fs::path& f : FilesUnder(dir, true)) files.push_back(f);
  // libvirt's own cases, from the libvirt source scripts/setup fetches (as scripts/fuzz seeds them).
  ASSERT_EQ(LibvirtCorpusProblem(), "");
  for (const std::string& name : LibvirtCasesWithXml()) files.push_back(LibvirtCaseOf(name).xml);
  for (const fs::path& f : files) {
    ++seeds;
    ++outcomes[ToString(Replay(f))];
  }
  std::string summary;
  for (const auto& [outcome, n] : outcomes) summary += " " + outcome + "=" + std::to_string(n);
  std::printf("[ seeds    ] %zu:%s\n", seeds, summary.c_str());
  EXPECT_GT(seeds, 0u);
  // The examples run as they are: they plan, so the plan invariants were checked on them.
  for (const fs::path& f : FilesUnder(kSource / "examples", true))
    EXPECT_EQ(ToString(Replay(f)), std::string("planned")) << f;

  // Every seed libvirt accepts plans, except the <memory> mismatches qlaunch refuses on purpose
  // (difference 1): libvirt's own cases with expected args (for its newest or for older QEMU
  // capabilities), on libvirt's own test host (where libvirt accepted them), and the
  // differential's and the virt-install corpus (accepted by the real libvirt), on the pipeline's
  // fixture host.
  PipelineInputs libvirt_host = Inputs();
  libvirt_host.host = LibvirtHost();
  size_t accepted = 0;
  std::vector<std::string> libvirt_accepted = LibvirtCases(LibvirtExpect::kArgs);
  for (const std::string& name : LibvirtCases(LibvirtExpect::kLegacyArgs)) libvirt_accepted.push_back(name);
  for (const std::string& name : libvirt_accepted) {
    const fs::path xml = LibvirtCaseOf(name).xml;
    const std::string want = LibvirtMemoryMismatchCases().contains(name) ? "invalid" : "planned";
    EXPECT_EQ(ToString(Replay(xml, libvirt_host)), want) << xml;
    ++accepted;
  }
  EXPECT_GE(accepted, 30u);
  for (const fs::path& dir : {kSource / "tests/fixtures/differential", kSource / "tests/fixtures/virtinst"})
    for (const fs::path& f : FilesUnder(dir, true))
      if (f.parent_path().filename() != "refused" && f.parent_path().filename() != "unsupported") {
        EXPECT_EQ(ToString(Replay(f)), std::string("planned")) << f;
        ++accepted;
      }

  // And so every invariant ran, on every seed that got that far.
  const InvariantCounts counts = InvariantCountsSoFar();
  std::printf("[ invariants ] %s\n", ToString(counts).c_str());
  EXPECT_GT(counts.diagnostics, 0u);
  EXPECT_GE(counts.plan, accepted);
  EXPECT_GT(counts.injection, 0u);
}

}  // namespace
}  // namespace qlaunch::testing
