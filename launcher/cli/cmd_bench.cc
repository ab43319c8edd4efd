// qlaunch bench: time `qlaunch start` against `virsh create` and plain QEMU on the user's own XML.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "launcher/bench/bench_report.h"
#include "launcher/bench/bench_starters.h"
#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/input_file.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  BenchRequest request;
  std::vector<std::string> against = {"virsh", "qemu", "kernel", "floor"};
  bool json = false;
  std::string plot;
};

// A domain XML read from standard input, in a file of its own (mode 0600) removed afterwards.
struct TempXml {
  std::string path;
  explicit TempXml(const std::string& xml) {
    std::string name = (std::filesystem::temp_directory_path() / "qlaunch-bench-XXXXXX.xml").string();
    const int fd = ::mkstemps(name.data(), 4);
    if (fd < 0) throw std::runtime_error("cannot write the domain XML from standard input to " + name);
    path = name;
    const bool written = ::write(fd, xml.data(), xml.size()) == static_cast<ssize_t>(xml.size());
    ::close(fd);
    if (!written) throw std::runtime_error("cannot write the domain XML from standard input to " + path);
  }
  ~TempXml() { std::filesystem::remove(path); }
  TempXml(const TempXml&) = delete;
  TempXml& operator=(const TempXml&) = delete;
};

int Run(Options& o) {
  if (!o.plot.empty()) CheckPlotting(o.plot);  // before any run, not after minutes of them
  BenchRequest& req = o.request;
  // "-": the XML from standard input, into a file of its own for every starter to read.
  std::optional<TempXml> from_stdin;
  if (req.cfg.domain_xml == "-") req.cfg.domain_xml = from_stdin.emplace(ReadStdinXml()).path;
  req.cfg.domain_xml = std::filesystem::absolute(req.cfg.domain_xml).string();
  req.virsh = req.qemu = req.kernel = req.floor = req.floor_sized = req.overlap = false;
  for (const auto& a : o.against)
    (a == "virsh"          ? req.virsh
     : a == "qemu"         ? req.qemu
     : a == "floor"        ? req.floor
     : a == "floor-sized"  ? req.floor_sized
     : a == "overlap"      ? req.overlap
                           : req.kernel) = true;
  req.tty_progress = ::isatty(STDERR_FILENO) == 1;
  BenchResult result = RunBench(req);
  if (o.json) std::printf("%s\n", ToJson(result).dump(2).c_str());
  else std::printf("%s", ToText(result).c_str());
  std::fflush(stdout);
  if (!o.plot.empty()) {
    WritePlot(result, o.plot);
    std::fprintf(stderr, "bench: plot written to %s\n", o.plot.c_str());
  }
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Measure how long starting a domain takes, on your own XML: `qlaunch start` (this binary, with\n"
      "--qemu and the START_OPTIONS after --) against `virsh -c URI create` and plain QEMU (the argv\n"
      "of `domxml-to-native --prealloc qemu`, -S, then QMP qmp_capabilities, cont and query-status).\n"
      "and the kernel's own limit (populate_ref: one memfd of the domain's size and page size filled\n"
      "with MADV_POPULATE_WRITE by one thread per usable CPU, the whole process; skipped with a note\n"
      "when the program is not installed), and QEMU's floor (the same plain QEMU with the guest's memory cut\n"
      "to the minimum, exec until it answers qmp_capabilities: what no launcher can remove), and on request\n"
      "floor-sized (the same with the domain's memory as it is, allocated on demand: QEMU's own start-up\n"
      "at this size) and overlap (the kernel reference and the floor started together, until both are done:\n"
      "a start that overlaps its fill with QEMU's start-up, with no launcher at all).\n"
      "Each is timed from fork to exit (qlaunch, virsh, kernel), to 'running' (QEMU) or to QMP ready\n"
      "(floor, floor-sized; overlap: whichever of its two ends later), monotonic clock,\n"
      "then its domain is destroyed, untimed. One untimed warm-up run of each, then N rounds that run\n"
      "each starter once, the order rotating by one a round; after every run the bench waits until\n"
      "every hugepage is free again (60 s at most). Prints per starter the runs, median and min-max,\n"
      "the ratios qlaunch/virsh, qlaunch/qemu, qlaunch/kernel (the median of the per-round ratios; below 1:\n"
      "qlaunch is faster), the differences running - floor (and - floor-sized), total - (floor + kernel) and total - overlap (medians of the\n"
      "per-round differences: what qlaunch adds) and the median of each phase `start` reports, completed\n"
      "from outside to cover the process from fork to exit (startup, exit, unaccounted). When libvirt does not answer,\n"
      "virsh is skipped with a warning. A domain of that name must not be running already. Any\n"
      "failure, or SIGINT/SIGTERM, destroys what the bench started and removes its files. Needs root\n"
      "for what `start` needs root for (hugepages, qemu:///system).\n"
      "Example: qlaunch bench --runs 10 --plot start.png examples/demo-hugepages.xml -- --prealloc launcher");
  SetKind(sub->add_option("DOMAIN.xml", o->request.cfg.domain_xml,
                          "libvirt domain XML; - reads it from standard input"),
          ArgKind::kInputOrStdin)
      ->required();
  sub->add_option("START_OPTIONS", o->request.cfg.start_options,
                  "after --: options passed on to `qlaunch start` (e.g. -- --prealloc launcher)");
  sub->add_option("--runs", o->request.rounds, "timed rounds, each running every starter once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--against", o->against,
                  "what to compare qlaunch with: virsh,qemu,kernel,floor,floor-sized,overlap (default the first four)")
      ->delimiter(',')
      ->allow_extra_args(false)  // --against qemu vm.xml: the XML is no starter
      ->check(CLI::IsMember({"virsh", "qemu", "kernel", "floor", "floor-sized", "overlap"}));
  SetKind(sub->add_option("--populate-ref", o->request.populate_ref,
                  "the kernel reference program (default: populate_ref beside qlaunch, or in ../lib/qlaunch)"),
                          ArgKind::kPath);
  sub->add_flag("--json", o->json,
                "print one JSON object instead of tables: {\"domain\",\"runs\",\"order\",\"starters\":\n"
                "{NAME:{\"runs_ms\",\"runs_clock_ns\",\"median\",\"min\",\"max\"}},\"ratios\",\"qlaunch_phases\",\n"
                "\"skipped\",\"hugepages\",...}");
  SetKind(sub->add_option("--plot", o->plot, "also draw every run into this PNG file (needs gnuplot)"), ArgKind::kPath);
  SetKind(sub->add_option("--qemu", o->request.cfg.qemu,
                  "QEMU binary for qlaunch and plain QEMU (default: the domain's <emulator>, else\n"
                  "/usr/bin/qemu-system-x86_64); virsh always uses the domain's <emulator>"), ArgKind::kPath);
  sub->add_option("--connect", o->request.cfg.uri, "libvirt URI for virsh")->capture_default_str();
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
