#include "launcher/bench/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "launcher/bench/bench_stats.h"
#include "launcher/lifecycle/start/start_interrupt.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

double Round3(double ms) { return std::round(ms * 1000.0) / 1000.0; }

// qlaunch's time over each other starter's, as RoundRatioMedian takes them: ("qlaunch/virsh", r).
std::vector<std::pair<std::string, double>> Ratios(const BenchResult& r) {
  std::vector<std::pair<std::string, double>> out;
  if (r.starters.empty()) return out;
  const StarterResult& ours = r.starters.front();
  for (size_t i = 1; i < r.starters.size(); ++i)
    if (std::optional<double> ratio = RoundRatioMedian(ours.runs_ms, r.starters[i].runs_ms))
      out.emplace_back(ours.name + "/" + r.starters[i].name, *ratio);
  return out;
}

const StarterResult* FindStarter(const BenchResult& r, const std::string& name) {
  for (const StarterResult& s : r.starters)
    if (s.name == name && !s.runs_ms.empty()) return &s;
  return nullptr;
}

double PhaseOf(const Phases& phases, const std::string& key) {
  for (const auto& [k, v] : phases)
    if (k == key) return v;
  return 0;
}

// What qlaunch adds to what no launcher can avoid, each the median over rounds of the difference
// within one round: "running - floor" (qlaunch's time to running, from its fork, minus QEMU's
// floor), "running - floor-sized" (the same against QEMU's start-up at the domain's size, when that
// starter ran), "total - (floor + kernel)" (its whole run minus the floor and the kernel's populate)
// and "total - overlap" (minus the two run together, when that starter ran).
std::vector<std::pair<std::string, double>> Differences(const BenchResult& r) {
  std::vector<std::pair<std::string, double>> out;
  const StarterResult* ours = FindStarter(r, "qlaunch");
  const StarterResult* floor = FindStarter(r, "floor");
  const StarterResult* kernel = FindStarter(r, "kernel");
  if (!ours) return out;
  if (floor) {
    const size_t n = std::min(ours->runs_ms.size(), floor->runs_ms.size());
    // qlaunch's running moment of each round minus `base`'s time in that round.
    auto running_minus = [&](const StarterResult& base) {
      const std::string name = "running - " + base.name;
      std::vector<double> diffs;
      for (size_t i = 0; i < n && i < base.runs_ms.size() && i < r.qlaunch_phases.size(); ++i)
        if (double ms = PhaseOf(r.qlaunch_phases[i], "running"); ms > 0) diffs.push_back(ms - base.runs_ms[i]);
      if (!diffs.empty()) out.emplace_back(name, Median(diffs));
    };
    running_minus(*floor);
    if (const StarterResult* sized = FindStarter(r, "floor-sized")) running_minus(*sized);
    if (kernel && kernel->runs_ms.size() >= n) {
      std::vector<double> total;
      for (size_t i = 0; i < n; ++i) total.push_back(ours->runs_ms[i] - floor->runs_ms[i] - kernel->runs_ms[i]);
      if (!total.empty()) out.emplace_back("total - (floor + kernel)", Median(total));
    }
  }
  if (const StarterResult* overlap = FindStarter(r, "overlap")) {
    std::vector<double> total;
    for (size_t i = 0; i < ours->runs_ms.size() && i < overlap->runs_ms.size(); ++i)
      total.push_back(ours->runs_ms[i] - overlap->runs_ms[i]);
    out.emplace_back("total - overlap", Median(total));
  }
  return out;
}

std::string Printf(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

}  // namespace

nlohmann::ordered_json ToJson(const BenchResult& r) {
  nlohmann::ordered_json starters = nlohmann::ordered_json::object();
  for (const StarterResult& s : r.starters) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (double ms : s.runs_ms) runs.push_back(Round3(ms));
    nlohmann::ordered_json clocks = nlohmann::ordered_json::array();
    for (const auto& [start, stop] : s.runs_clock_ns) clocks.push_back({start, stop});
    nlohmann::ordered_json j = {{"warmup_ms", Round3(s.warmup_ms)}, {"runs_ms", runs}, {"runs_clock_ns", clocks}};
    if (!s.runs_ms.empty()) {
      RunSummary sum = Summarize(s.runs_ms);
      j["median"] = Round3(sum.median);
      j["min"] = Round3(sum.min);
      j["max"] = Round3(sum.max);
    }
    starters[s.name] = j;
  }
  nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
  for (const auto& [pair, ratio] : Ratios(r)) ratios[pair] = std::round(ratio * 10000.0) / 10000.0;
  nlohmann::ordered_json differences = nlohmann::ordered_json::object();
  for (const auto& [what, ms] : Differences(r)) differences[what] = Round3(ms);
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  for (const auto& [phase, ms] : PhaseMedians(r.qlaunch_phases)) phases[phase] = Round3(ms);
  nlohmann::ordered_json skipped = nlohmann::ordered_json::object();
  for (const auto& [name, why] : r.skipped) skipped[name] = why;
  nlohmann::ordered_json hugepages = nlohmann::ordered_json::array();
  for (const HugepageCount& h : r.hugepages)
    hugepages.push_back({{"node", h.node}, {"page_size_bytes", h.page_bytes}, {"free", h.free}});
  return {{"domain", r.domain},
          {"xml", r.xml},
          {"uri", r.uri},
          {"runs", r.rounds},
          {"start_options", r.start_options},
          {"order", r.order},
          {"starters", starters},
          {"ratios", ratios},
          {"differences_ms", differences},
          {"qlaunch_phases", phases},
          {"skipped", skipped},
          {"hugepages", hugepages}};
}

std::string ToText(const BenchResult& r) {
  std::string out = "qlaunch bench: domain " + r.domain + " (" + r.xml + "), " + std::to_string(r.rounds) +
                    " round" + (r.rounds == 1 ? "" : "s") + " after a warm-up, the order rotating each round\n";
  if (!r.start_options.empty()) {
    out += "  qlaunch start options:";
    for (const auto& o : r.start_options) out += " " + o;
    out += "\n";
  }
  out += "\n" + Printf("  %-8s %5s %10s %17s\n", "starter", "runs", "median ms", "min-max ms");
  for (const StarterResult& s : r.starters) {
    if (s.runs_ms.empty()) {
      out += Printf("  %-8s %5d %10s %17s\n", s.name.c_str(), 0, "-", "-");
      continue;
    }
    RunSummary sum = Summarize(s.runs_ms);
    out += Printf("  %-8s %5zu %10.1f %17s\n", s.name.c_str(), sum.runs, sum.median,
                  Printf("%.1f-%.1f", sum.min, sum.max).c_str());
  }
  for (const auto& [name, why] : r.skipped) out += Printf("  %-8s skipped: ", name.c_str()) + why + "\n";

  if (std::vector<std::pair<std::string, double>> ratios = Ratios(r); !ratios.empty()) {
    out += "\n  ratio, the median of per-round ratios (below 1: qlaunch is faster)\n";
    for (const auto& [pair, ratio] : ratios)
      out += Printf("  %-14s %6.2f  (%s)\n", pair.c_str(), ratio,
                    ratio < 1 ? Printf("qlaunch %.2fx as fast", 1 / ratio).c_str()
                              : Printf("qlaunch takes %.2fx as long", ratio).c_str());
  }

  if (std::vector<std::pair<std::string, double>> diffs = Differences(r); !diffs.empty()) {
    out += "\n  what qlaunch adds, the median of per-round differences (ms)\n";
    for (const auto& [what, ms] : diffs) out += Printf("  %-26s %8.1f\n", what.c_str(), ms);
  }

  if (Phases phases = PhaseMedians(r.qlaunch_phases); !phases.empty()) {
    out += "\n  qlaunch start phases, median ms over " + std::to_string(r.qlaunch_phases.size()) + " runs\n";
    for (const auto& [phase, ms] : phases) {
      if (phase == "total") out += "  ----------- ----------\n";
      out += Printf("  %-11s %10.1f\n", phase.c_str(), ms);
    }
  }
  return out;
}

std::string GnuplotQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "''";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out + "'";
}

std::string GnuplotScript(const BenchResult& r, const std::string& png) {
  // noenhanced: a domain name with '_' or '^' is printed as it is, not as a subscript.
  std::string s = "set terminal pngcairo noenhanced size 960,540\n"
                  "set output " + GnuplotQuote(png) + "\n" +
                  "set title " + GnuplotQuote("qlaunch bench: start latency of " + r.domain + ", " +
                                              std::to_string(r.rounds) + " rounds (lower is faster)") + "\n" +
                  "set xlabel 'round'\n"
                  "set ylabel 'start to running, ms'\n"
                  "set key below\n"
                  "set grid ytics\n" +
                  Printf("set xrange [0.5:%zu.5]\n", r.rounds) + (r.rounds <= 20 ? "set xtics 1\n" : "") +
                  "set yrange [0:*]\n";
  std::string plot;
  for (size_t i = 0; i < r.starters.size(); ++i) {
    const StarterResult& st = r.starters[i];
    if (st.runs_ms.empty()) continue;
    const std::string block = "$d" + std::to_string(i), color = std::to_string(i + 1);
    s += block + " << EOD\n";
    for (size_t round = 0; round < st.runs_ms.size(); ++round) s += Printf("%zu %.3f\n", round + 1, st.runs_ms[round]);
    s += "EOD\n";
    const double median = Summarize(st.runs_ms).median;
    plot += std::string(plot.empty() ? "plot " : ", \\\n     ") + block + " using 1:2 with linespoints lw 2 pt 7 lc " +
            color + " title " + GnuplotQuote(st.name + Printf(" (median %.1f ms)", median)) + ", \\\n     " +
            Printf("%.3f", median) + " with lines dt 2 lc " + color + " notitle";
  }
  return s + (plot.empty() ? "plot 0 notitle" : plot) + "\n";
}

void CheckPlotting(const fs::path& png) {
  if (!FindProgram("gnuplot"))
    throw std::runtime_error("--plot needs gnuplot, which is not installed (apt-get install gnuplot-nox)");
  const fs::path dir = fs::absolute(png).parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error("--plot " + png.string() + ": directory " + dir.string() + " does not exist");
  BenchWorkDir work;
  ChildRun check = RunChild({"gnuplot", "-e", "set terminal pngcairo"}, work.path(), "gnuplot", nullptr,
                            std::chrono::seconds(30));
  if (!check.ok())
    throw std::runtime_error("--plot: this gnuplot cannot write PNG files (no pngcairo terminal: install gnuplot-nox)" +
                             check.ErrTail());
}

void WritePlot(const BenchResult& result, const fs::path& png) {
  StartInterrupt interrupt;  // Ctrl-C now: gnuplot is stopped, the private directory goes
  BenchWorkDir work;
  const fs::path script = work.path() / "plot.gp", drawn = work.path() / "plot.png";
  std::ofstream(script) << GnuplotScript(result, drawn.string());
  ChildRun run = RunChild({"gnuplot", script.string()}, work.path(), "gnuplot", &interrupt, std::chrono::seconds(60));
  interrupt.ThrowIfInterrupted();
  std::error_code ec;
  if (!run.ok() || !fs::is_regular_file(drawn, ec))
    throw std::runtime_error("--plot: gnuplot " + run.Describe() + run.ErrTail());
  // Copied, not drawn in place: a failed gnuplot leaves no half-written PNG behind.
  fs::copy_file(drawn, png, fs::copy_options::overwrite_existing);
}

}  // namespace qlaunch::launcher
