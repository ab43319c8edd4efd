// Where `qlaunch bench` starts and stops its clocks, checked against what is seen from outside the
// bench: the floor's QEMU and the kernel reference's populate_ref run under tests/support/bench_witness.py,
// which notes on CLOCK_MONOTONIC (the clock of the report's runs_clock_ns) when QEMU's greeting and its
// answer to qmp_capabilities passed between QEMU and the bench, and when populate_ref began and
// exited. No timing thresholds: only the order of events that cause one another.
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "support/bench_command.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class BenchCommandClockTest : public BenchCommandTest {
 protected:
  // A shell script `name` in tmp() that runs the witness in `mode` around `real`, logging to
  // tmp()/witness.jsonl (written by QEMU's unprivileged user too).
  std::string Witness(const std::string& name, const std::string& mode, const std::string& real) {
    log_ = tmp() / "witness.jsonl";
    if (!fs::exists(log_)) {
      std::ofstream(log_).flush();
      ::chmod(log_.c_str(), 0666);
    }
    // A copy beside it: QEMU's user may not read the source tree (CI's clone is in a 0700 directory).
    const fs::path witness = tmp() / "bench_witness.py";
    if (!fs::exists(witness)) {
      fs::copy_file(fs::path(QLAUNCH_SOURCE_DIR) / "tests/support/bench_witness.py", witness);
      ::chmod(witness.c_str(), 0644);
    }
    const fs::path script = tmp() / name;
    std::ofstream(script) << "#!/bin/sh\nexec /usr/bin/python3 " << witness.string() << " " << mode << " " << real
                          << " " << log_.string() << " \"$@\"\n";
    ::chmod(script.c_str(), 0755);
    return script.string();
  }

  // What the witness logged of `what` ("qmp", "populate"), optionally only in the starter directory
  // `dir`, in the order the records began.
  std::vector<json> Records(const std::string& what, const std::string& dir = "") {
    std::vector<json> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) {
      json r = json::parse(line);
      if (r["what"] == what && (dir.empty() || r["dir"] == dir)) out.push_back(r);
    }
    std::sort(out.begin(), out.end(),
              [](const json& a, const json& b) { return a["start"].get<int64_t>() < b["start"].get<int64_t>(); });
    return out;
  }

  fs::path log_;
};

// The floor's clock runs from before QEMU's exec until QEMU has answered qmp_capabilities (the
// answer comes from its main loop, once its start-up is over), not until its greeting (which its
// monitor thread sends earlier); the kernel reference's from before populate_ref's exec until it
// has exited, its populate done, not until the fork returned.
TEST_F(BenchCommandClockTest, TheFloorStopsOnceQemuHasAnsweredAndTheKernelOnceThePopulateIsDone) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  const std::string ref = std::string(QLAUNCH_BINARY_DIR) + "/populate_ref";
  ASSERT_EQ(::access(ref.c_str(), X_OK), 0) << ref << " is not built (cmake --build build --target populate_ref)";
  const std::string qemu = Witness("qemu", "qemu", kQemu72), populate = Witness("populate_ref", "populate", ref);

  RunResult r = Bench({"--runs", "2", "--json", "--qemu", qemu, "--populate-ref", populate, "--against",
                       "floor,kernel", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const json report = json::parse(r.out);
  ExpectStarter(report, "floor", 2);
  ExpectStarter(report, "kernel", 2);
  const json& floor = report["starters"]["floor"]["runs_clock_ns"];
  const json& kernel = report["starters"]["kernel"]["runs_clock_ns"];

  // The warm-up and the two rounds, each one QMP exchange seen in the floor's directory.
  const std::vector<json> qmp = Records("qmp", "floor");
  ASSERT_EQ(qmp.size(), 3u) << "the witness saw these floor runs: " << json(qmp).dump();
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("floor, round " + std::to_string(i + 1));
    const json& seen = qmp[i + 1];
    ASSERT_TRUE(seen.contains("greeting") && seen.contains("asked") && seen.contains("answered")) << seen.dump();
    const int64_t start = floor[i][0], stop = floor[i][1];
    EXPECT_LT(seen["greeting"].get<int64_t>(), seen["asked"].get<int64_t>()) << seen.dump();
    EXPECT_LT(seen["asked"].get<int64_t>(), seen["answered"].get<int64_t>()) << seen.dump();
    EXPECT_LE(start, seen["start"].get<int64_t>()) << "the floor's clock started after QEMU was exec'd: " << seen.dump();
    EXPECT_GE(stop, seen["answered"].get<int64_t>())
        << "the floor's clock stopped " << (seen["answered"].get<int64_t>() - stop) / 1e6
        << " ms before QEMU's answer to qmp_capabilities reached the bench (the greeting came "
        << (seen["greeting"].get<int64_t>() - start) / 1e6 << " ms after the start, the answer "
        << (seen["answered"].get<int64_t>() - start) / 1e6 << " ms; the bench's run: " << floor[i].dump()
        << "): " << seen.dump();
  }

  const std::vector<json> fills = Records("populate");
  ASSERT_EQ(fills.size(), 3u) << "the witness saw these populate_ref runs: " << json(fills).dump();
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("kernel, round " + std::to_string(i + 1));
    const json& seen = fills[i + 1];
    EXPECT_EQ(seen["rc"], 0) << seen.dump();
    const int64_t start = kernel[i][0], stop = kernel[i][1];
    EXPECT_LE(start, seen["start"].get<int64_t>()) << "the kernel's clock started after populate_ref was exec'd";
    EXPECT_GE(stop, seen["exit"].get<int64_t>())
        << "the kernel's clock stopped " << (seen["exit"].get<int64_t>() - stop) / 1e6
        << " ms before populate_ref had exited (it began " << (seen["start"].get<int64_t>() - start) / 1e6
        << " ms and exited " << (seen["exit"].get<int64_t>() - start) / 1e6
        << " ms after the start; the bench's run: " << kernel[i].dump() << "): " << seen.dump();
  }
  ExpectHostAsFound();
}

}  // namespace
}  // namespace qlaunch::testing
