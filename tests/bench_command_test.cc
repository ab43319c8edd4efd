// qlaunch bench on a real QEMU 7.2 (and libvirt, where it answers), as root, with real hugepages:
// what it reports, and that it leaves the host as it found it (no domain, no QEMU, every hugepage
// free, no temporary directory), after a full run, an error and a SIGINT.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "support/bench_command.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Every ratio the report gives, recomputed from the two starters' own runs: the median over the
// rounds of qlaunch's time over the other's in the same round. The report computes it from the
// unrounded times and rounds it to 0.0001; the runs it prints are rounded to 0.001 ms, so a ratio
// recomputed from them may differ by up to r * (0.0005/ours + 0.0005/theirs) as well (a 10 ms
// kernel run over a 100 ms start: 0.0005 of a ratio of 10).
void ExpectRatios(const json& report, const std::set<std::string>& want) {
  std::set<std::string> pairs;
  for (const auto& [pair, ratio] : report["ratios"].items()) {
    SCOPED_TRACE(pair);
    pairs.insert(pair);
    ASSERT_EQ(pair.rfind("qlaunch/", 0), 0u);
    const std::string other = pair.substr(std::string("qlaunch/").size());
    const std::vector<double> ours = report["starters"]["qlaunch"]["runs_ms"].get<std::vector<double>>();
    const std::vector<double> theirs = report["starters"][other]["runs_ms"].get<std::vector<double>>();
    ASSERT_EQ(ours.size(), theirs.size()) << report.dump(2);
    std::vector<double> per_round;
    double rounding = 0.0;
    for (size_t i = 0; i < ours.size(); ++i) {
      per_round.push_back(ours[i] / theirs[i]);
      rounding = std::max(rounding, ours[i] / theirs[i] * (0.0005 / ours[i] + 0.0005 / theirs[i]));
    }
    const double want_ratio = MedianOf(per_round);
    EXPECT_NEAR(ratio.get<double>(), want_ratio, 0.00005 + rounding + 1e-9) << report.dump(2);
  }
  EXPECT_EQ(pairs, want) << report["ratios"].dump();
}

TEST_F(BenchCommandTest, TimesQlaunchVirshAndQemuInRotatingRoundsAndLeavesNothing) {
  if (std::string why = LibvirtUnreachable(); !why.empty()) GTEST_SKIP() << why;
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();

  RunResult r = Bench({"--runs", "2", "--json", "--qemu", kQemu72, xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  json report = json::parse(r.out);
  std::printf("[ bench    ] %s\n", report.dump().c_str());
  EXPECT_EQ(report["domain"], dom_.name);
  EXPECT_EQ(report["runs"], 2);
  EXPECT_EQ(report["xml"], xml);
  EXPECT_EQ(report["uri"], "qemu:///system");
  EXPECT_EQ(report["order"], json::parse(R"([["qlaunch","virsh","qemu","floor","kernel"],)"
                                         R"(["virsh","qemu","floor","kernel","qlaunch"]])"));
  for (const char* s : {"qlaunch", "virsh", "qemu", "floor", "kernel"}) ExpectStarter(report, s, 2);
  EXPECT_EQ(report["skipped"], json::object());
  ExpectRatios(report, {"qlaunch/virsh", "qlaunch/qemu", "qlaunch/kernel", "qlaunch/floor"});
  // The median of every phase `start --json` reports, by name, completed from outside: from the
  // fork (startup) to the exit (exit), total the bench's own time for the run.
  const json& phases = report["qlaunch_phases"];
  for (const char* phase : {"startup", "cli", "parse", "topology", "probe", "plan", "preflight", "pool_lock", "memfd",
                            "spawn", "qmp_ready", "prealloc", "unmap", "cont", "hand_over", "return", "exit",
                            "unaccounted", "running"})
    EXPECT_TRUE(phases[phase].is_number()) << phase << " in " << phases.dump();
  ASSERT_TRUE(phases["total"].is_number()) << phases.dump();
  EXPECT_GT(phases["startup"].get<double>(), 0.0) << phases.dump();
  EXPECT_GT(phases["exit"].get<double>(), 0.0) << phases.dump();
  EXPECT_NEAR(phases["total"].get<double>(), report["starters"]["qlaunch"]["median"].get<double>(), 0.002)
      << "the phases' total is the time the bench measured around start";
  EXPECT_LT(std::abs(phases["unaccounted"].get<double>()), 2.0) << phases.dump();
  // What qlaunch adds to QEMU's floor, recomputed from the runs: with two rounds, the mean of the
  // two per-round differences. The running moment is per run; its median over two runs is the
  // mean too, so running - floor is checked against the medians' difference only loosely.
  const json& diffs = report["differences_ms"];
  ASSERT_TRUE(diffs["running - floor"].is_number()) << report.dump(2);
  ASSERT_TRUE(diffs["total - (floor + kernel)"].is_number()) << report.dump(2);
  std::vector<double> q = report["starters"]["qlaunch"]["runs_ms"].get<std::vector<double>>();
  std::vector<double> f = report["starters"]["floor"]["runs_ms"].get<std::vector<double>>();
  std::vector<double> k = report["starters"]["kernel"]["runs_ms"].get<std::vector<double>>();
  EXPECT_NEAR(diffs["total - (floor + kernel)"].get<double>(), (q[0] - f[0] - k[0] + q[1] - f[1] - k[1]) / 2, 0.01)
      << report.dump(2);
  EXPECT_NEAR(diffs["running - floor"].get<double>(), phases["running"].get<double>() - MedianOf(f), 0.01)
      << report.dump(2);
  EXPECT_GT(report["starters"]["floor"]["median"].get<double>(), 0.0);
  // The baseline it waited for: the free pages of node 0's 2 MiB pool before the warm-up.
  bool node0 = false;
  for (const json& h : report["hugepages"])
    if (h["node"] == 0 && h["page_size_bytes"] == (2u << 20)) {
      node0 = true;
      EXPECT_EQ(h["free"], free_before_) << h.dump();
    }
  EXPECT_TRUE(node0) << report["hugepages"].dump();
  ExpectHostAsFound();
}

TEST_F(BenchCommandTest, SkipsVirshWithAWarningWhenLibvirtDoesNotAnswer) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  const std::string uri = "qemu:///nonexistent-test";

  RunResult r = Bench({"--runs", "1", "--connect", uri, "--qemu", kQemu72, xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("qlaunch: warning: virsh: cannot connect to " + uri + " ("), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("): libvirt comparison skipped; start it with scripts/libvirt-up\n"), std::string::npos)
      << r.Describe();
  // The text report: a row per starter that ran, the skipped one, the ratio, the phases.
  for (const std::string& want :
       {"qlaunch bench: domain " + dom_.name, std::string("\n  qlaunch      1 "), std::string("\n  qemu         1 "),
        std::string("\n  virsh    skipped: cannot connect"), std::string("\n  qlaunch/qemu "),
        std::string("\n  total      ")})
    EXPECT_NE(r.out.find(want), std::string::npos) << "no '" << want << "' in:\n" << r.out;
  EXPECT_EQ(r.out.find("qlaunch/virsh"), std::string::npos) << r.out;
  ExpectHostAsFound();

  // Options after -- go to qlaunch start; --against takes one list, the XML is no starter.
  r = Bench({"--runs", "1", "--json", "--connect", uri, "--qemu", kQemu72, "--against", "virsh", xml, "--",
             "--prealloc", "launcher"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  json report = json::parse(r.out);
  EXPECT_EQ(report["start_options"], json::parse(R"(["--prealloc","launcher"])"));
  ExpectStarter(report, "qlaunch", 1);
  EXPECT_FALSE(report["starters"].contains("virsh")) << report.dump(2);
  EXPECT_FALSE(report["starters"].contains("qemu")) << "--against virsh: no plain QEMU";
  EXPECT_TRUE(report["skipped"]["virsh"].is_string()) << report.dump(2);
  EXPECT_EQ(report["ratios"], json::object());
  ExpectHostAsFound();
}

// The kernel reference: populate_ref beside qlaunch fills as much memory as the domain has, in its
// page size; without the program the bench warns and goes on.
TEST_F(BenchCommandTest, KernelReferenceRunsOrIsSkippedWithAWarning) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  RunResult r = Bench({"--runs", "2", "--json", "--qemu", kQemu72, "--against", "kernel", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  json report = json::parse(r.out);
  ExpectStarter(report, "kernel", 2);
  ExpectStarter(report, "qlaunch", 2);
  ExpectRatios(report, {"qlaunch/kernel"});
  ExpectHostAsFound();

  r = Bench({"--runs", "1", "--json", "--qemu", kQemu72, "--against", "kernel", "--populate-ref",
             (tmp() / "no-such-populate_ref").string(), xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("qlaunch: warning: kernel: " + (tmp() / "no-such-populate_ref").string() +
                       " is not an executable file: the kernel reference skipped"),
            std::string::npos)
      << r.Describe();
  report = json::parse(r.out);
  EXPECT_FALSE(report["starters"].contains("kernel")) << report.dump(2);
  EXPECT_TRUE(report["skipped"]["kernel"].is_string()) << report.dump(2);
  ExpectHostAsFound();
}

// floor-sized: QEMU at the domain's own size with nothing preallocated, beside the floor; what
// qlaunch adds against it is reported as well (one round: the difference of that round).
TEST_F(BenchCommandTest, TheSizedFloorIsTimedBesideTheFloor) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  RunResult r = Bench({"--runs", "1", "--json", "--qemu", kQemu72, "--against", "floor,floor-sized", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  json report = json::parse(r.out);
  ExpectStarter(report, "floor", 1);
  ExpectStarter(report, "floor-sized", 1);
  EXPECT_FALSE(report["starters"].contains("qemu")) << report.dump(2);
  const json& diffs = report["differences_ms"];
  ASSERT_TRUE(diffs["running - floor-sized"].is_number()) << report.dump(2);
  EXPECT_NEAR(diffs["running - floor-sized"].get<double>(),
              report["qlaunch_phases"]["running"].get<double>() -
                  report["starters"]["floor-sized"]["runs_ms"][0].get<double>(),
              0.01)
      << report.dump(2);
  ExpectHostAsFound();
}

// overlap: the kernel reference and the floor started together; qlaunch is compared with it as
// with every starter, and what it adds to it is reported (one round: that round's difference).
TEST_F(BenchCommandTest, TheOverlapRunsTheKernelReferenceAndTheFloorTogether) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  RunResult r = Bench({"--runs", "1", "--json", "--qemu", kQemu72, "--against", "kernel,floor,overlap", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  json report = json::parse(r.out);
  ExpectStarter(report, "overlap", 1);
  ExpectStarter(report, "kernel", 1);
  ExpectRatios(report, {"qlaunch/kernel", "qlaunch/floor", "qlaunch/overlap"});
  const json& diffs = report["differences_ms"];
  ASSERT_TRUE(diffs["total - overlap"].is_number()) << report.dump(2);
  EXPECT_NEAR(diffs["total - overlap"].get<double>(),
              report["starters"]["qlaunch"]["runs_ms"][0].get<double>() -
                  report["starters"]["overlap"]["runs_ms"][0].get<double>(),
              0.01)
      << report.dump(2);
  ExpectHostAsFound();
}

TEST_F(BenchCommandTest, PlotWritesAPng) {
  if (::access("/usr/bin/gnuplot", X_OK) != 0)
    GTEST_SKIP() << "gnuplot is missing (scripts/setup installs gnuplot-nox)";
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  const fs::path png = tmp() / "start.png";

  RunResult r = Bench({"--runs", "2", "--plot", png.string(), "--qemu", kQemu72, "--against", "qemu", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("bench: plot written to " + png.string()), std::string::npos) << r.Describe();
  std::ifstream in(png, std::ios::binary);
  std::string magic(8, '\0');
  in.read(magic.data(), 8);
  EXPECT_EQ(magic, std::string("\x89PNG\r\n\x1a\n", 8)) << png;
  EXPECT_GT(fs::file_size(png), 1000u);
  ExpectHostAsFound();
}

TEST_F(BenchCommandTest, ErrorsBeforeAnyRun) {
  pool_.emplace(HugepagePool::LockOnly());  // counts free pages without resizing the pool
  free_before_ = HugepagesFree();
  // A domain XML qlaunch refuses: the message names file and line, nothing is started.
  const fs::path bad = tmp() / "bad.xml";
  std::ofstream(bad) << "<domain type='qemu'>\n  <name>qlaunch-bench-it</name>\n  <memory unit='MiB'>64</memory>\n"
                        "  <vcpu>0</vcpu>\n</domain>\n";
  RunResult r = Bench({"--runs", "1", bad.string()});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(bad.string() + ":"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("error"), std::string::npos) << r.Describe();
  EXPECT_EQ(r.out, "") << r.Describe();
  EXPECT_EQ(r.err.find("bench: round"), std::string::npos) << r.Describe();
  EXPECT_EQ(r.err.find("warm-up"), std::string::npos) << r.Describe();

  // --plot without gnuplot: said at once, not after the runs.
  const std::string xml = WriteBenchDomain();
  r = Bench({"--runs", "1", "--plot", (tmp() / "x.png").string(), xml}, {{"PATH", "/nonexistent"}});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("--plot needs gnuplot, which is not installed"), std::string::npos) << r.Describe();
  EXPECT_EQ(r.err.find("warm-up"), std::string::npos) << r.Describe();

  // Usage errors.
  for (const auto& args : std::vector<std::vector<std::string>>{{"--runs", "0", xml}, {"--against", "lxc", xml}}) {
    r = Bench(args);
    EXPECT_EQ(r.exit_code, 2) << r.Describe();
  }
  // A domain XML that is not there is an error naming it (exit 1), before any run.
  r = Bench({"--runs", "1", (tmp() / "missing.xml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("qlaunch: error: bench: cannot read " + (tmp() / "missing.xml").string()), std::string::npos)
      << r.Describe();
  ExpectHostAsFound();
}

TEST_F(BenchCommandTest, AFailingStarterIsAnErrorNamingItAndLeavesNothing) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  RunResult r = Bench({"--runs", "1", "--against", "qemu", "--qemu", kQemu72, xml, "--", "--no-such-start-option"});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("qlaunch: error: bench: starter qlaunch failed (warm-up): qlaunch start exited with status 2; "
                       "its stderr ends with:\n"),
            std::string::npos)
      << r.Describe();
  EXPECT_NE(r.err.find("--no-such-start-option"), std::string::npos) << r.Describe();
  EXPECT_EQ(r.out, "") << r.Describe();
  ExpectHostAsFound();
}

TEST_F(BenchCommandTest, RefusesADomainThatIsAlreadyRunning) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  RunResult start = Qlaunch({"start", "--qemu", kQemu72, xml});
  ASSERT_EQ(start.exit_code, 0) << start.Describe();

  // The bench would destroy it: it refuses, and the domain keeps running.
  RunResult r = Bench({"--runs", "1", "--against", "qemu", "--qemu", kQemu72, xml});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("domain " + dom_.name + " is running under qlaunch"), std::string::npos) << r.Describe();
  RunResult list = Qlaunch({"list", "--json"});
  json domains = json::parse(list.out);
  ASSERT_EQ(domains.size(), 1u) << list.Describe();
  EXPECT_EQ(domains[0]["state"], "running");

  RunResult destroy = Qlaunch({"destroy", dom_.name});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  ExpectHostAsFound();
}

TEST_F(BenchCommandTest, SigintLeavesNothingBehind) {
  if (std::string why = ReservePool(); !why.empty()) GTEST_SKIP() << why;
  const std::string xml = WriteBenchDomain();
  // Once qlaunch's domain is up (its state directory exists), the bench gets SIGINT: whatever
  // runs at that moment (the destroy, the next starter, the wait for hugepages) must be undone.
  for (int delay_ms : {0, 150, 400}) {
    SCOPED_TRACE(delay_ms);
    RunningProcess p({QlaunchBinary(), "bench", "--runs", "50", "--against", "qemu", "--qemu", kQemu72, xml},
                     BaseEnv());
    bool sent = false;
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline && !PidGone(p.pid())) {
      if (fs::exists(DomainStateDir(dom_.name))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        sent = ::kill(p.pid(), SIGINT) == 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    RunResult r = p.Wait(std::chrono::seconds(120));
    ASSERT_TRUE(sent) << r.Describe();
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("interrupted by SIGINT"), std::string::npos) << r.Describe();
    // A plain QEMU killed on the way out gives its pages back as it is reaped; allow a moment.
    for (int i = 0; i < 500 && HugepagesFree() != free_before_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ExpectHostAsFound();
  }
}

}  // namespace
}  // namespace qlaunch::testing
