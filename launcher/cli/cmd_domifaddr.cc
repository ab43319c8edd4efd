// qlaunch domifaddr: a running domain's IP addresses, as `virsh domifaddr` lists them.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/dom_ifaddr_read.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name, source = "lease", interface;
  bool full = false;
  bool json = false;
};

int Run(const Options& o) {
  StateDir state;
  std::vector<IfAddrRow> rows;
  if (o.source == "agent") {
    rows = ReadAgentAddresses(state, o.name);
  } else {
    rows = ReadLeaseAddresses(state, o.name);
    std::fputs(rows.empty() ? "note: --source lease lists the addresses of <interface type='user'> NICs only (QEMU's "
                              "DHCP server); this domain has none: try --source agent\n"
                            : "note: QEMU's user network reports no leases: the addresses are those its DHCP server "
                              "gives the guest's NIC\n",
               stderr);
  }
  if (!o.interface.empty()) std::erase_if(rows, [&](const IfAddrRow& r) { return r.name != o.interface; });
  if (o.json) {
    std::printf("%s\n", ToJson(rows).dump().c_str());
    return 0;
  }
  std::fputs(IfAddrTable(rows, o.full).c_str(), stdout);
  return 0;
}

}  // namespace

void AddDomifaddrCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "domifaddr",
      "List a running domain's IP addresses as `virsh domifaddr` does: Name, MAC address, Protocol,\n"
      "Address. --source agent asks the guest agent (qemu-guest-agent in the guest, on the\n"
      "org.qemu.guest_agent.0 channel); --source lease (the default) gives, for each user-network NIC,\n"
      "the address QEMU's DHCP server hands out (10.0.2.15/24: QEMU reports no leases).\n"
      "Example: qlaunch domifaddr --source agent vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("--source", o->source, "where the addresses come from (default lease)")
      ->check(CLI::IsMember({"lease", "agent"}));
  sub->add_option("--interface", o->interface, "only this interface");
  sub->add_flag("--full", o->full, "the name and MAC on every line");
  sub->add_flag("--json", o->json, "print [{\"name\",\"mac\",\"addresses\":[{\"protocol\",\"address\",\"prefix\"}]}]");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
