// qlaunch dumpxml: a running domain's live XML, as `virsh dumpxml` prints it; --inactive: the XML
// as it was given.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/defined_domains.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/domain_xml.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name;
  bool inactive = false;
};

int Run(const Options& o) {
  StateDir state;
  DefinedDomains defined;
  // A defined domain's inactive XML is its definition; a shut-off one has no other (as in virsh).
  const bool definition =
      defined.IsDefined(o.name) && (o.inactive || !std::filesystem::exists(state.DomainDir(o.name)));
  const std::string xml = definition   ? defined.Read(o.name)
                          : o.inactive ? InactiveDomainXmlOf(state, o.name)
                                       : LiveDomainXmlOf(state, o.name, Verb::kDumpxml);
  std::fwrite(xml.data(), 1, xml.size(), stdout);
  return 0;
}

}  // namespace

void AddDumpxmlCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "dumpxml",
      "Print a running domain's live XML, as `virsh dumpxml` prints it: the XML it was started with, and\n"
      "what the start chose: <domain id> (QEMU's pid), every device's <alias name> (the id QEMU knows it\n"
      "by), the PCI addresses qlaunch assigned (and the controllers it added), MACs, the <target dev> of\n"
      "taps, VNC/SPICE ports actually bound, pty paths, DIMM slots and bases. `qlaunch domxml-to-native`\n"
      "of it gives the same devices at the same addresses. A defined domain that is shut off: its definition.\n"
      "Example: qlaunch dumpxml vm1 > vm1-live.xml");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_flag("--inactive", o->inactive,
                "the XML as it was given to start (kept in the state dir; also while the domain is still\n"
                "starting, or after its QEMU died and before its entry is cleaned up); for a defined domain,\n"
                "its definition (what the next start uses), running or not");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
