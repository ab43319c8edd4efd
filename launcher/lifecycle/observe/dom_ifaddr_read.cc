#include "launcher/lifecycle/observe/dom_ifaddr_read.h"

#include <stdexcept>

#include "launcher/lifecycle/observe/domain_xml.h"
#include "launcher/lifecycle/observe/guest_agent.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

namespace {

constexpr std::chrono::milliseconds kQmpTimeout{5000}, kSyncTimeout{5000}, kCommandTimeout{10000};

std::string XmlFile(const StateDir& state, const std::string& name) {
  return (state.DomainDir(name) / "domain.xml").string();
}

// Has the guest opened the agent's virtio port? QEMU's query-chardev says, for the chardev on
// `socket` (frontend-open); nullopt when QEMU lists no chardev on it.
std::optional<bool> AgentPortOpen(const StateDir& state, const std::string& name, const std::string& socket) {
  DomainSession s = OpenDomainSession(state, name, Verb::kDomifaddr, kQmpTimeout);
  const nlohmann::json chardevs = s.qmp->Execute("query-chardev", nullptr, kQmpTimeout);
  for (const nlohmann::json& c : chardevs) {
    const std::string filename = c.value("filename", "");
    const size_t at = filename.find("unix:" + socket);
    const size_t end = at == std::string::npos ? at : at + 5 + socket.size();
    if (at == std::string::npos || (end < filename.size() && filename[end] != ',')) continue;
    if (c.contains("frontend-open") && c["frontend-open"].is_boolean()) return c["frontend-open"].get<bool>();
  }
  return std::nullopt;
}

}  // namespace

std::vector<IfAddrRow> ReadAgentAddresses(const StateDir& state, const std::string& name) {
  const std::string live = LiveDomainXmlOf(state, name, Verb::kDomifaddr);
  const std::string socket = GuestAgentSocket(live, XmlFile(state, name));
  if (socket.empty())
    throw std::runtime_error("domain " + name + " has no guest agent channel (a <channel type='unix'> with <target "
                             "type='virtio' name='" + kGuestAgentChannel + "'/>)");
  if (AgentPortOpen(state, name, socket) == false)
    throw std::runtime_error("domain " + name + ": the guest agent is not connected (the guest has not opened its " +
                             kGuestAgentChannel + " port; is qemu-guest-agent running in the guest?)");
  try {
    return AgentInterfaces(GuestAgentCommand(socket, "guest-network-get-interfaces", kSyncTimeout, kCommandTimeout));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("domain " + name + ": " + e.what());
  }
}

std::vector<IfAddrRow> ReadLeaseAddresses(const StateDir& state, const std::string& name) {
  const std::string live = LiveDomainXmlOf(state, name, Verb::kDomifaddr);
  return UserNetworkLeases(LeaseNics(live, XmlFile(state, name)));
}

}  // namespace qlaunch::launcher
