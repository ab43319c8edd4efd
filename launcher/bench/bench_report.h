// What `qlaunch bench` prints: a table per starter, the per-round ratios and qlaunch's phases
// (text), or all of it as one JSON object; and the PNG plot of every run, drawn by gnuplot.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/bench/bench_starters.h"

namespace qlaunch::launcher {

// {"domain", "xml", "uri", "runs", "start_options", "order": [[starter, ...] per round],
//  "starters": {NAME: {"warmup_ms", "runs_ms": [...], "runs_clock_ns": [[start, stop], ...], "median", "min",
//  "max"}} (runs_clock_ns: where each run's clock started and stopped, ns of CLOCK_MONOTONIC),
//  "ratios": {"qlaunch/virsh", "qlaunch/qemu"}, "differences_ms": {"running - floor",
//  "total - (floor + kernel)"} (medians of per-round differences, with the floor starter),
//  "qlaunch_phases": {phase: median ms} (startup to exit, total, unaccounted, running, populated),
//  "skipped": {NAME: why}, "hugepages": [{"node", "page_size_bytes", "free"}]}; ms with three
// decimals. Ratios (median over rounds of qlaunch_i / other_i) below 1 mean qlaunch is faster.
nlohmann::ordered_json ToJson(const BenchResult& result);

// The same as readable text.
std::string ToText(const BenchResult& result);

// The gnuplot script drawing every run of every starter by round, with its median, titled with
// the domain's name, into `png` (pngcairo).
std::string GnuplotScript(const BenchResult& result, const std::string& png);
// A string in gnuplot's single quotes ('' stands for one ').
std::string GnuplotQuote(const std::string& s);

// Before any run: gnuplot is installed and has the pngcairo terminal, and `png`'s directory
// exists. Throws std::runtime_error saying what is missing.
void CheckPlotting(const std::filesystem::path& png);
// Draws the plot (gnuplot in a private directory, then the PNG copied to `png`). Throws
// std::runtime_error with gnuplot's stderr; a SIGINT meanwhile leaves nothing behind either.
void WritePlot(const BenchResult& result, const std::filesystem::path& png);

}  // namespace qlaunch::launcher
