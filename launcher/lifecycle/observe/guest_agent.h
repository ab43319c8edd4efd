// The QEMU guest agent of a running domain: its channel (a <channel type='unix'> whose
// <target type='virtio' name='org.qemu.guest_agent.0'/>; QEMU listens on its socket, the live
// XML names it) and one command over it, as libvirt talks to the agent: first a guest-sync with a
// random id (guest-sync-delimited, after a 0xFF that resets the agent's parser; the agent's
// reply comes after a 0xFF of its own, so stale output of an earlier client is skipped), then the
// command. Every read is bounded by a timeout: a channel nobody answers (no agent in the guest,
// or no guest OS yet) is an error, not a hang.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {

inline constexpr const char* kGuestAgentChannel = "org.qemu.guest_agent.0";

// The agent channel's socket path in a live domain XML; "" when the domain has none. Pure.
// Throws DiagnosticError when the XML does not parse.
std::string GuestAgentSocket(const std::string& live_xml, const std::string& file);

class GuestAgentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Connects to `socket`, syncs, runs `command` and returns its "return". Throws GuestAgentError:
// the socket cannot be connected, no sync reply within `sync_timeout`, no command reply within
// `timeout`, the agent's own error (its desc), a reply that is not JSON.
nlohmann::json GuestAgentCommand(const std::string& socket, const std::string& command,
                                 std::chrono::milliseconds sync_timeout, std::chrono::milliseconds timeout);

}  // namespace qlaunch::launcher
