// qlaunch start: start a domain from its XML and return once the guest runs.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/input_file.h"
#include "launcher/lifecycle/start/definition.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/start.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  StartOptions start;
  std::string prealloc = "auto";
  bool json = false;
};

int Run(Options& o) {
  o.start.prealloc = *ParsePreallocMode(o.prealloc);
  CheckDefinitionName(o.start.domain_xml);
  StartReport report = StartDomain(o.start);
  report.timings.Mark(Phase::kReturn);  // StartDomain's guards, gone with its return
  report.timings.Finish();
  if (o.json) std::printf("%s\n", ToJson(report).dump().c_str());
  else std::printf("%s", ToTable(report).c_str());
  return 0;
}

}  // namespace

void AddStartCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "start",
      "Start a domain from a libvirt domain XML, like `virsh create`, and return once the guest runs.\n"
      "Plans the QEMU command line, checks the hugepage pools (a shortfall fails before anything is\n"
      "created), starts QEMU paused, lets it (or qlaunch's own NUMA-pinned preallocator, for shared\n"
      "memfd backends) preallocate guest memory, deletes the thread-contexts, resumes the guest and\n"
      "prints where the time went. QEMU runs as a uid and gid of the domain's own (leased; see --user) with\n"
      "no capabilities, in its own cgroup where cgroup v2 allows; the files it needs are chowned to\n"
      "that user and given back when the domain goes. QEMU keeps running after qlaunch exits; its\n"
      "state lives in $QLAUNCH_STATE_DIR/NAME (default /run/qlaunch/NAME, mode 0700): pid, qmp.sock,\n"
      "qemu.log, domain.xml, plan.json, user, labels.json, cgroup, devices.json (taps, VNC/SPICE\n"
      "ports), channel/ (the sockets of channels without a path, e.g. the guest agent's); taps it\n"
      "made go with QEMU. On any failure, or SIGINT/SIGTERM,\n"
      "everything is released again. Two starts that need more hugepages than are free together\n"
      "are serialised: the second fails in the pre-flight, naming node and pages.\n"
      "Environment: QLAUNCH_STATE_DIR, QLAUNCH_QMP_TIMEOUT_MS (default 30000), and as a testing\n"
      "aid QLAUNCH_FAULT=preflight|spawn|qmp|prealloc|cont|running (fail at that phase, QEMU killed,\n"
      "as if the real failure happened there; everything is released as on any failure; running:\n"
      "with --run-early, while the guest runs and its memory is still being filled).\n"
      "Examples: qlaunch start --json examples/two-cells-hugepages.xml\n"
      "          qlaunch start --run-early --progress examples/two-cells-hugepages.xml");
  AddDomainInput(sub, &o->start.domain_xml);
  SetKind(sub->add_option("--qemu", o->start.qemu,
                  "QEMU binary (default: the domain's <emulator>, else /usr/bin/qemu-system-x86_64)"), ArgKind::kPath);
  sub->add_option("--prealloc", o->prealloc,
                  "who preallocates: auto (the faster, per backend: qlaunch for shared hugetlb memfds, QEMU\n"
                  "for the rest; see docs/planner.md and `domxml-to-native --format json`'s prealloc_reason),\n"
                  "qemu (always QEMU), launcher (qlaunch for every shared memfd backend)")
      ->check(CLI::IsMember({"auto", "qemu", "launcher"}))
      ->capture_default_str();
  sub->add_flag("--json", o->json,
                "print {\"name\",\"pid\",\"prealloc\",\"run_early\",[\"incoming\": the URI it listens on,]\n"
                "\"timings_ms\":{...}} instead of a table");
  sub->add_flag("--progress", o->start.progress, "show a preallocation progress line on stderr");
  sub->add_flag("--run-early", o->start.run_early,
                "resume the guest as soon as QEMU is ready and fill its memory behind it with qlaunch's\n"
                "pinned workers; return once the memory is full (timings_ms.running, .populated). Only for\n"
                "shared hugetlb memfd memory that qlaunch fills (reserved when mapped, so nothing can fail\n"
                "later); refused with the reason for 4 KiB pages, private memory, <locked/>, --prealloc qemu");
  sub->add_option("--incoming", o->start.incoming,
                  "URI: make this the destination of a migration (`qlaunch migrate` on the source): plan and\n"
                  "fill memory as for a start, then QEMU listens on tcp:HOST:PORT (port 0: any free one, the\n"
                  "one taken is printed) or unix:PATH, and the command returns. Give it the source's live XML\n"
                  "(`qlaunch dumpxml NAME` there), so both ends are the same machine. The domain is incoming\n"
                  "until the guest is in, then runs if it ran on the source (paused if it was paused).")
      ->excludes("--run-early");
  SetKind(sub->add_option("--sysfs", o->start.sysfs, "read the host from this copy of /sys instead of the real one"),
          ArgKind::kDir);
  SetKind(sub->add_option("--user", o->start.user,
                  "run QEMU as USER[:GROUP] (names or +UID:+GID; default: the domain's <seclabel type='static'\n"
                  "model='dac'> label, else ids of the domain's own, leased while it runs). QEMU never keeps root's capabilities unless this names\n"
                  "root, which prints a warning. Files the guest needs are chowned to it and given back afterwards."),
                          ArgKind::kUser);
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
