// `qlaunch bench`: the starters it times on the user's own domain XML, the wait between runs
// until every hugepage is back, and the rounds themselves.
//
//   qlaunch  this binary (/proc/self/exe) `start --json [--qemu PATH] [start options] XML`, timed
//            from fork to exit; its timings_ms are kept; then the domain is destroyed (untimed).
//   virsh    `virsh -c URI create XML`, timed from fork to exit; then `virsh destroy NAME`.
//   qemu     plain QEMU with the argv `qlaunch domxml-to-native --prealloc qemu` prints (QEMU
//            preallocates itself; planned here by the same code), its QMP socket in a private
//            directory, run as the user `start` runs QEMU as; timed from exec until QMP
//            qmp_capabilities + cont + query-status say running; then QMP quit and the wait for
//            QEMU to exit (untimed).
//   floor    the same plain QEMU with the guest's memory cut to the minimum (bench_floor.h), timed
//            from exec until it answers qmp_capabilities; then quit (untimed).
//   kernel, overlap  the kernel's populate limit, alone and beside the floor (bench_kernel.h).
//
// One file each: bench_qlaunch.cc, bench_virsh.cc, bench_qemu.cc, bench_kernel.cc (the kernel's
// populate limit); the rounds are bench_rounds.cc, and what they share (running a child,
// counting free hugepages, the work directory) bench_starters.cc.
//
// A starter leaves nothing behind, whether its run succeeds, fails or is interrupted (SIGINT or
// SIGTERM to the bench, forwarded to the child at work): its domain is destroyed, its QEMU
// killed, its directories removed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "domain/domain_def.h"
#include "launcher/bench/bench_stats.h"
#include "launcher/lifecycle/start/start_interrupt.h"

namespace qlaunch::launcher {

// A child process run to its end: stdin /dev/null, stdout and stderr into files.
struct ChildRun {
  int status = 0;          // wait status
  bool timed_out = false;  // killed (SIGKILL) when the timeout ran out
  double ms = 0;           // fork to exit, on the monotonic clock
  std::chrono::steady_clock::time_point forked, exited;  // the two ends of ms
  std::string out;         // its whole stdout
  std::filesystem::path err_file;

  bool ok() const;               // exited with status 0
  std::string Describe() const;  // "exited with status 1", "was killed by signal 9 (SIGKILL)", "timed out"
  // "; its stderr ends with:\n<last lines>", or "" when it printed nothing there.
  std::string ErrTail() const;
};

// Runs argv (argv[0] a path with a '/', or a name looked up in $PATH; 127 when it cannot be
// executed) in this process group, so a Ctrl-C on the terminal reaches it as it reaches us.
// Its output goes to <dir>/<tag>.out and <dir>/<tag>.err (replaced). While it runs, an
// interrupt of the bench is forwarded to it as SIGINT. timeout 0: no limit. `meanwhile`, when
// given, runs right after the fork, while the child runs; if it throws, the child is killed
// (SIGKILL) and reaped and the exception goes on.
ChildRun RunChild(const std::vector<std::string>& argv, const std::filesystem::path& dir, const std::string& tag,
                  StartInterrupt* interrupt, std::chrono::milliseconds timeout = {},
                  const std::function<void()>& meanwhile = nullptr);

// The full path of `program` in $PATH (an executable file), or nullopt.
std::optional<std::string> FindProgram(const std::string& program);

// The free pages of one hugepage pool: node (-1 on a host without per-node counters), page size.
struct HugepageCount {
  int node = -1;
  uint64_t page_bytes = 0;
  uint64_t free = 0;
  bool operator==(const HugepageCount&) const = default;
};
// <sys>/devices/system/node/node*/hugepages/hugepages-*kB/free_hugepages, by node then size;
// <sys>/kernel/mm/hugepages/... (node -1) where there are no per-node counters.
std::vector<HugepageCount> ReadFreeHugepages(const std::filesystem::path& sys = "/sys");

// Polls (every few ms; never on a timed path) until every pool of `baseline` has at least its
// free pages again. Throws std::runtime_error naming `after`, each short pool and the timeout;
// an interrupt ends the wait with "interrupted by SIGINT".
void WaitHugepagesBack(const std::vector<HugepageCount>& baseline, std::chrono::milliseconds timeout,
                       const StartInterrupt& interrupt, const std::string& after,
                       const std::filesystem::path& sys = "/sys");

// A private temporary directory (<tmp>/qlaunch-bench-XXXXXX, mode 0711: QEMU's user may reach
// a subdirectory it owns, nothing else), removed with everything in it on destruction.
class BenchWorkDir {
 public:
  BenchWorkDir();
  ~BenchWorkDir();
  BenchWorkDir(const BenchWorkDir&) = delete;
  BenchWorkDir& operator=(const BenchWorkDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// What every starter needs.
struct BenchConfig {
  std::string domain_xml;
  std::string name;  // the domain's <name>
  std::string qemu;  // --qemu PATH; "" = the domain's <emulator>, else the default
  std::string uri = "qemu:///system";
  std::vector<std::string> start_options;  // extra options for `qlaunch start`
  std::filesystem::path work_dir;          // the bench's private directory (outputs, QMP socket)
  StartInterrupt* interrupt = nullptr;
};

struct StarterRun {
  double ms = 0;  // stop - start
  Phases phases;  // qlaunch: its timings_ms; empty for the others
  // Where the clock started and stopped (steady_clock = CLOCK_MONOTONIC, which every process of
  // the host shares): the report gives them, so that a run can be lined up with what was seen from
  // outside it (a QMP exchange, a child's exit).
  std::chrono::steady_clock::time_point start, stop;

  static StarterRun Between(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point stop) {
    return {std::chrono::duration<double, std::milli>(stop - start).count(), {}, start, stop};
  }
};

class Starter {
 public:
  virtual ~Starter() = default;
  virtual std::string name() const = 0;
  // One start, timed, then its domain destroyed (untimed). Throws std::runtime_error saying what
  // failed, with the stderr (or QEMU log) tail, after cleaning up; "interrupted by SIGINT" (or
  // SIGTERM) when the bench was interrupted.
  virtual StarterRun Run() = 0;
};

std::unique_ptr<Starter> MakeQlaunchStarter(const BenchConfig& cfg);
std::unique_ptr<Starter> MakeVirshStarter(const BenchConfig& cfg);
// Plans `def` here and now, as `domxml-to-native --prealloc qemu` does (DiagnosticError for a
// domain this host or QEMU cannot run), and makes the starter's private directory under
// cfg.work_dir, owned by QEMU's user.
std::unique_ptr<Starter> MakeQemuStarter(const BenchConfig& cfg, const domain::DomainDef& def);
// The same QEMU, with the domain's memory cut to the minimum (bench_floor.h), timed from exec until
// it answers qmp_capabilities: QEMU's own start-up, the floor no launcher can go below. Its private
// directory is cfg.work_dir/`dir_name` (the overlap starter, bench_kernel.h, runs one of its own).
std::unique_ptr<Starter> MakeFloorStarter(const BenchConfig& cfg, const domain::DomainDef& def,
                                          const std::string& dir_name = "floor");
// `floor-sized`: the same, with the domain's memory as it is but allocated on demand
// (SizedFloorDomain): QEMU's own start-up at this size.
std::unique_ptr<Starter> MakeSizedFloorStarter(const BenchConfig& cfg, const domain::DomainDef& def);

// {"virsh", "-q", "-c", URI, args...}.
std::vector<std::string> VirshArgv(const BenchConfig& cfg, std::initializer_list<std::string> args);

// Why `virsh -c URI` cannot be used (not installed, `virsh uri` fails: the daemon is not
// running, ...), or nullopt when it answers.
std::optional<std::string> VirshUnreachable(const BenchConfig& cfg);

// What `qlaunch bench` was asked to do.
struct BenchRequest {
  BenchConfig cfg;          // name and work_dir are filled in by RunBench
  size_t rounds = 5;
  bool virsh = true, qemu = true, kernel = true, floor = true;  // --against
  bool floor_sized = false, overlap = false;                     // --against floor-sized,overlap
  std::string populate_ref;        // --populate-ref; "" = FindPopulateRef()
  bool tty_progress = false;       // rewrite one progress line on stderr instead of a line per run
};

struct StarterResult {
  std::string name;
  double warmup_ms = 0;
  std::vector<double> runs_ms;  // by round
  std::vector<std::pair<int64_t, int64_t>> runs_clock_ns;  // by round: start and stop, ns of CLOCK_MONOTONIC
};

struct BenchResult {
  std::string domain, xml, uri;
  size_t rounds = 0;
  std::vector<std::string> start_options;
  std::vector<std::vector<std::string>> order;  // the starters in the order they ran, per round
  std::vector<StarterResult> starters;          // qlaunch first
  std::vector<Phases> qlaunch_phases;           // timings_ms of each timed qlaunch run
  std::vector<std::pair<std::string, std::string>> skipped;  // starter, why
  std::vector<HugepageCount> hugepages;         // free before the warm-up, restored after every run
};

// Loads the domain (DiagnosticError: nothing has run), refuses a domain that already runs
// (under qlaunch or libvirt: the bench would destroy it), skips virsh with a warning when
// libvirt does not answer, then: one untimed warm-up run of each starter, and `rounds` rounds
// running each starter once, rotating the order. After every run: the domain is gone and every
// hugepage is back (60 s at most). The private work directory is removed in the end, however
// it ends.
BenchResult RunBench(BenchRequest request);

}  // namespace qlaunch::launcher
