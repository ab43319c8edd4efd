// scripts/bench's issue-22 helpers on inputs of our own binary: scripts/bench-helpers/floor_report.py
// on two `qlaunch bench --json` results of a small domain, fixed_cost.py running `qlaunch start`,
// `qlaunch run` and `qlaunch --version` itself. Every figure they give is recomputed here from
// the per-round values they give with it, every verdict from the limit they state; what fixed_cost.py
// measures from outside (start's exit, run's READY=1) is bounded below by what qlaunch reports of the
// same run (the guest ran before either). No timing thresholds.
#include <fstream>

#include "support/bench_command.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kHelpers = std::string(QLAUNCH_SOURCE_DIR) + "/scripts/bench-helpers";

class BenchHelpersTest : public BenchCommandTest {
 protected:
  RunResult Python(const std::vector<std::string>& args, const Env& env = {}) {
    std::vector<std::string> argv = {"/usr/bin/python3"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunningProcess(argv, env).Wait(std::chrono::minutes(5));
  }
  // `qlaunch bench --json ARGS` into <tmp>/<file>, parsed.
  json BenchInto(const std::string& file, std::vector<std::string> args) {
    RunResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    std::ofstream(tmp() / file) << r.out;
    return json::parse(r.out);
  }
};

std::vector<double> Runs(const json& bench, const std::string& starter) {
  return bench["starters"][starter]["runs_ms"].get<std::vector<double>>();
}

// The median over the rounds of f(one run of each starter), as the report reads a ratio.
double PerRound(const json& bench, const std::vector<std::string>& starters,
                double (*f)(const std::vector<double>&)) {
  std::vector<std::vector<double>> runs;
  for (const std::string& s : starters) runs.push_back(Runs(bench, s));
  std::vector<double> values;
  for (size_t i = 0; i < runs[0].size(); ++i) {
    std::vector<double> one;
    for (const auto& r : runs) one.push_back(r.at(i));
    values.push_back(f(one));
  }
  return MedianOf(values);
}

// The target named by `starts_with`, its figure `want`, met exactly when |figure| (or the figure)
// is at most its limit `limit`.
void ExpectTarget(const json& targets, const std::string& starts_with, double want, double limit, bool absolute,
                  double tolerance = 1e-6) {
  SCOPED_TRACE(starts_with);
  const json* found = nullptr;  // the first that starts so, unless one is exactly that
  for (const json& t : targets) {
    const std::string text = t["target"].get<std::string>();
    if (text == starts_with || (!found && text.rfind(starts_with, 0) == 0)) found = &t;
  }
  ASSERT_NE(found, nullptr) << targets.dump(1);
  const json& t = *found;
  EXPECT_NEAR(t["value"].get<double>(), want, tolerance) << t.dump();
  EXPECT_EQ(t["limit"].get<double>(), limit) << t.dump();
  const double v = absolute ? std::abs(t["value"].get<double>()) : t["value"].get<double>();
  EXPECT_EQ(t["met"].get<bool>(), v <= limit) << t.dump();
}

TEST_F(BenchHelpersTest, FloorReportChecksIssue22sTargetsOnBenchResults) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  const json start = BenchInto("start.json", {"--runs", "2", "--json", "--qemu", kQemu72, "--against",
                                              "kernel,floor,overlap", xml});
  const json early = BenchInto("early.json", {"--runs", "2", "--json", "--qemu", kQemu72, "--against",
                                              "floor", xml, "--", "--run-early"});
  ExpectHostAsFound();
  ASSERT_FALSE(HasFailure());

  RunResult r = Python({kHelpers + "/floor_report.py", (tmp() / "start.json").string(), (tmp() / "early.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const json targets = json::parse(r.out)["targets"];
  std::printf("[ floor    ] %s\n", targets.dump().c_str());
  ASSERT_EQ(targets.size(), 6u) << targets.dump(1);
  // The report's differences are of unrounded runs, rounded to 0.001 ms.
  ExpectTarget(targets, "`--run-early`: running − QEMU floor ≤ 15 ms",
               early["differences_ms"]["running - floor"].get<double>(), 15, false);
  ExpectTarget(targets, "`start`: total / (kernel + floor) ≤ 0.95",
               PerRound(start, {"qlaunch", "kernel", "floor"},
                        [](const std::vector<double>& x) { return x[0] / (x[1] + x[2]); }),
               0.95, false);
  ExpectTarget(targets, "`start`: total − (floor + kernel) ≤ 15 ms",
               start["differences_ms"]["total - (floor + kernel)"].get<double>(), 15, false);
  ExpectTarget(targets, "unaccounted < 2 ms at 8 GiB", start["qlaunch_phases"]["unaccounted"].get<double>(), 2, true);
  ExpectTarget(targets, "unaccounted < 2 ms at 8 GiB (--run-early)",
               early["qlaunch_phases"]["unaccounted"].get<double>(), 2, true);
  // The host's own limit is a reference: its figure, no verdict.
  for (const json& t : targets)
    if (t["target"].get<std::string>().find("the host's own limit") != std::string::npos) {
      EXPECT_NEAR(t["value"].get<double>(),
                  PerRound(start, {"overlap", "kernel", "floor"},
                           [](const std::vector<double>& x) { return x[0] / (x[1] + x[2]); }),
                  1e-6)
          << t.dump();
      EXPECT_TRUE(t["limit"].is_null() && t["met"].is_null()) << t.dump();
    }
}

// fixed_cost.py's figures: run − start from qlaunch's own timings, and from outside run's READY=1 −
// start's exit; --version against /bin/true; each with its issue-22 verdict.
TEST_F(BenchHelpersTest, FixedCostComparesRunAndStartFromOutsideAndChecksItsTargets) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  const fs::path out = tmp() / "fixed-cost.json";
  Env env = BaseEnv();
  env["FIXED_COST_MIN_RUN_ROUNDS"] = "1";
  env["ISOLATION_MIN_ROUNDS"] = "1";  // the bench runs 15 alternating rounds; the figures' shape needs one
  RunResult r = Python({kHelpers + "/fixed_cost.py", QlaunchBinary(), xml, dom_.name, out.string(), "1"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  ExpectHostAsFound();
  std::ifstream in(out);
  const json res = json::parse(in);
  std::printf("[ fixed    ] %s\n", res.dump().c_str());
  EXPECT_EQ(res["rounds"], 1) << res.dump(1);
  for (const json* into : {&res, &res["run_early"]}) {
    const json& x = *into;
    SCOPED_TRACE(into == &res ? "run against start" : "--run-early");
    for (const char* key : {"start_running_ms", "run_running_ms", "run_minus_start_ms", "start_exit_ms", "run_ready_ms",
                            "ready_minus_exit_ms"})
      ASSERT_EQ(x[key].size(), 1u) << key << " in " << x.dump();
    const double start = x["start_running_ms"][0], run = x["run_running_ms"][0];
    const double exit = x["start_exit_ms"][0], ready = x["run_ready_ms"][0];
    EXPECT_GT(start, 0);
    EXPECT_GT(run, 0);
    // Seen from outside, timed from before the spawn: start exits, and run's READY=1 arrives, only
    // after the guest ran, which each reports from its own fork (its start-up counted as its CPU and
    // run-queue time since then, never more than the time since the spawn).
    EXPECT_GE(exit, start - 0.001) << "start exited before its guest ran, as fixed_cost.py saw it: " << x.dump();
    EXPECT_GE(ready, run - 0.001) << "run's READY=1 arrived before its guest ran, as fixed_cost.py saw it: " << x.dump();
    EXPECT_NEAR(x["run_minus_start_ms"][0].get<double>(), run - start, 0.0011) << x.dump();
    EXPECT_NEAR(x["ready_minus_exit_ms"][0].get<double>(), ready - exit, 0.0011) << x.dump();
    EXPECT_EQ(x["run_minus_start_median_ms"], x["run_minus_start_ms"][0]) << x.dump();
    EXPECT_EQ(x["ready_minus_exit_median_ms"], x["ready_minus_exit_ms"][0]) << x.dump();
  }
  const json& v = res["version"];
  ASSERT_EQ(v["ratio"].size(), 1u) << v.dump();
  // The ratio is that of the two times as written, rounded to 0.001 (once it was taken from the unrounded
  // times, and a 60x ratio under ASan over a 1.26 ms /bin/true moved 0.0027 past the rounding).
  EXPECT_NEAR(v["ratio"][0].get<double>(), v["qlaunch_ms"][0].get<double>() / v["true_ms"][0].get<double>(), 0.00051)
      << v.dump();
  EXPECT_EQ(v["ratio_median"], v["ratio"][0]) << v.dump();

  const json& targets = res["targets"];
  ASSERT_EQ(targets.size(), 6u) << targets.dump(1);
  ExpectTarget(targets, "`run` time to running within 5 ms", res["run_minus_start_median_ms"], 5, true);
  ExpectTarget(targets, "`run` ready within 5 ms of `start` done, from outside", res["ready_minus_exit_median_ms"], 5,
               true);
  ExpectTarget(targets, "the same with `--run-early` (", res["run_early"]["run_minus_start_median_ms"], 5, true);
  ExpectTarget(targets, "the same with `--run-early`, from outside", res["run_early"]["ready_minus_exit_median_ms"], 5,
               true);
  ExpectTarget(targets, "`qlaunch --version` ≤ 2 × `/bin/true`", v["ratio_median"], 2, false);
  // Isolation's cost: on − off per round (QLAUNCH_ISOLATION=off), the median its verdict.
  const json& iso = res["isolation"];
  EXPECT_EQ(iso["rounds"], 1) << iso.dump();
  for (const char* phase : {"running", "exit", "preflight", "spawn"}) {
    SCOPED_TRACE(phase);
    ASSERT_EQ(iso["diff"][phase].size(), 1u) << iso.dump();
    EXPECT_NEAR(iso["diff"][phase][0].get<double>(),
                iso["on"][phase][0].get<double>() - iso["off"][phase][0].get<double>(), 0.0011)
        << iso.dump();
    EXPECT_EQ(iso["median_diff_ms"][phase], iso["diff"][phase][0]) << iso.dump();
  }
  ExpectTarget(targets, "isolation (ids of its own, mount namespace) adds at most 3 ms", iso["median_diff_ms"]["running"],
               3, true);

  // The Targets rows report.py prints: one per target, its verdict the one written.
  r = Python({"-c", "import sys; sys.path.insert(0, sys.argv[1]); from fixed_cost import target_rows; "
                    "print('\\n'.join(target_rows(sys.argv[2])))",
              kHelpers, out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  size_t row = 0;
  for (const json& t : targets) {
    const size_t eol = r.out.find('\n', row);
    ASSERT_NE(eol, std::string::npos) << r.out;
    const std::string line = r.out.substr(row, eol - row);
    EXPECT_EQ(line.rfind("| " + t["target"].get<std::string>() + " | ", 0), 0u) << line;
    EXPECT_TRUE(line.ends_with(t["met"].get<bool>() ? " | met |" : " | **not met** |")) << line << "\n" << t.dump();
    row = eol + 1;
  }
  EXPECT_EQ(row, r.out.size()) << r.out;
}

}  // namespace
}  // namespace qlaunch::testing
