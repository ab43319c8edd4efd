// qlaunch define: keep a domain XML as a defined domain, like `virsh define`.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/input_file.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/start/definition.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string xml;
};

int Run(const Options& o) {
  const bool from_stdin = o.xml == "-";
  const std::optional<std::string> text = from_stdin ? std::optional<std::string>(ReadStdinXml()) : ReadSmallFile(o.xml);
  if (!text) throw std::runtime_error("cannot read " + o.xml);
  const std::string file = from_stdin ? "<stdin>" : o.xml;
  domain::DomainDef def;
  const std::vector<Diagnostic> problems = CheckDefinition(*text, file, &def);
  for (const Diagnostic& d : problems) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  if (HasErrors(problems)) throw std::runtime_error("define: " + file + " does not validate: nothing defined");
  DefinedDomains defined;
  DefineDomain(defined, def, *text);
  std::printf("Domain '%s' defined from %s\n", def.name.c_str(), file.c_str());
  std::fprintf(stderr, "qlaunch: define: %s\n", kLeftOutForDefinition);
  return 0;
}

}  // namespace

void AddDefineCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "define",
      "Define a domain from a libvirt domain XML, like `virsh define`: check it as `validate` does\n"
      "(syntax, semantics, the plan on this host and its QEMU; not the free hugepages nor KVM, which\n"
      "only a start needs), and keep it as $QLAUNCH_CONFIG_DIR/NAME.xml (default\n"
      "/etc/qlaunch/domains, root-only), written whole or not at all. `start NAME` and `run NAME` then\n"
      "start it; `list --all` shows it while it is shut off. A name already defined is refused unless\n"
      "the XML has that definition's <uuid> (then it replaces it), and a <uuid> defined under another\n"
      "name is refused, as libvirt does; an XML without <uuid> is kept with one generated.\n"
      "Example: qlaunch define vm1.xml && qlaunch start vm1");
  SetKind(sub->add_option("DOMAIN.xml", o->xml, "libvirt domain XML; - reads it from standard input"),
          ArgKind::kInputOrStdin)
      ->required();
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
