// qlaunch domifaddr: a running domain's IP addresses, as `virsh domifaddr` lists them.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/dom_ifaddr.h"
#include "launcher/lifecycle/domain_xml.h"
#include "launcher/lifecycle/guest_agent.h"

namespace qlaunch::launcher {

namespace {

constexpr std::chrono::milliseconds kSyncTimeout{5000}, kCommandTimeout{10000};

struct Options {
  std::string name, source = "lease", interface;
  bool full = false;
  bool json = false;
};

std::vector<IfAddrRow> FromAgent(const std::string& name, const std::string& live, const std::string& file) {
  const std::string socket = GuestAgentSocket(live, file);
  if (socket.empty())
    throw std::runtime_error("domain " + name + " has no guest agent channel (a <channel type='unix'> with <target "
                             "type='virtio' name='" + kGuestAgentChannel + "'/>)");
  try {
    return AgentInterfaces(GuestAgentCommand(socket, "guest-network-get-interfaces", kSyncTimeout, kCommandTimeout));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("domain " + name + ": " + e.what());
  }
}

int Run(const Options& o) {
  StateDir state;
  const std::string live = LiveDomainXmlOf(state, o.name, Verb::kDomifaddr);
  const std::string file = (state.DomainDir(o.name) / "domain.xml").string();
  std::vector<IfAddrRow> rows;
  if (o.source == "agent") {
    rows = FromAgent(o.name, live, file);
  } else {
    try {
      rows = UserNetworkLeases(LeaseNics(live, file));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("domain " + o.name + " has " + e.what());
    }
    std::fputs("note: QEMU's user network reports no leases; these are the address its DHCP server gives the "
               "guest's NIC\n",
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
  sub->add_option("NAME", o->name, "the domain's <name>")->required();
  sub->add_option("--source", o->source, "where the addresses come from (default lease)")
      ->check(CLI::IsMember({"lease", "agent"}));
  sub->add_option("--interface", o->interface, "only this interface");
  sub->add_flag("--full", o->full, "the name and MAC on every line");
  sub->add_flag("--json", o->json, "print [{\"name\",\"mac\",\"addresses\":[{\"protocol\",\"address\",\"prefix\"}]}]");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
