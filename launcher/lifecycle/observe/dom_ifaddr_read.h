// `qlaunch domifaddr`: the rows of launcher/lifecycle/observe/dom_ifaddr.h read from a running domain:
// its live XML, and for --source agent its guest agent (launcher/lifecycle/observe/guest_agent.h), after
// asking QEMU (query-chardev) whether the guest has opened the agent's port at all, as libvirt
// knows it from VSERPORT_CHANGE: a guest without a running agent is told at once.
#pragma once

#include <string>
#include <vector>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/dom_ifaddr.h"

namespace qlaunch::launcher {

// Throws std::runtime_error: unknown domain or not running, no agent channel, the agent not
// connected or not answering (naming the domain and the socket).
std::vector<IfAddrRow> ReadAgentAddresses(const StateDir& state, const std::string& name);

// The user NICs' addresses (UserNetworkLeases) of a running domain.
std::vector<IfAddrRow> ReadLeaseAddresses(const StateDir& state, const std::string& name);

}  // namespace qlaunch::launcher
