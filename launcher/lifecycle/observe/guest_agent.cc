#include "launcher/lifecycle/observe/guest_agent.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "common/unique_fd.h"
#include "domain/xml_doc.h"
#include "domain/xml_node.h"

namespace qlaunch::launcher {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string Seconds(std::chrono::milliseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", t.count() / 1000.0);
  return buf;
}

void SendAll(int fd, const std::string& data, const std::string& socket) {
  for (size_t off = 0; off < data.size();) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw GuestAgentError("cannot write to the guest agent channel " + socket + ": " + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
}

// Reads what arrives until `deadline` into *buf; false when the deadline passed first. Throws on
// EOF or an error.
bool ReadSome(int fd, std::string* buf, Clock::time_point deadline, const std::string& socket) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw GuestAgentError("poll on the guest agent channel " + socket + ": " + std::strerror(errno));
    if (r == 0) return false;
    char chunk[4096];
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw GuestAgentError("cannot read the guest agent channel " + socket + ": " + std::strerror(errno));
    if (n == 0) throw GuestAgentError("the guest agent channel " + socket + " was closed by QEMU");
    buf->append(chunk, static_cast<size_t>(n));
    return true;
  }
}

// The next complete line of *buf (without its newline), removed from it; nullopt when none.
std::optional<std::string> TakeLine(std::string* buf) {
  const size_t nl = buf->find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buf->substr(0, nl);
  buf->erase(0, nl + 1);
  return line;
}

}  // namespace

std::string GuestAgentSocket(const std::string& live_xml, const std::string& file) {
  using domain::ElementChildren;
  using domain::NodeAttr;
  const domain::XmlDoc doc = domain::XmlDoc::Parse(live_xml, file);
  for (const xmlNode* devices : ElementChildren(doc.Root(), "devices"))
    for (const xmlNode* c : ElementChildren(devices, "channel")) {
      if (NodeAttr(c, "type").value_or("") != "unix") continue;
      bool agent = false;
      for (const xmlNode* t : ElementChildren(c, "target"))
        agent = agent || (NodeAttr(t, "type").value_or("") == "virtio" && NodeAttr(t, "name") == kGuestAgentChannel);
      if (!agent) continue;
      for (const xmlNode* s : ElementChildren(c, "source"))
        if (auto path = NodeAttr(s, "path")) return *path;
    }
  return "";
}

json GuestAgentCommand(const std::string& socket, const std::string& command, std::chrono::milliseconds sync_timeout,
                       std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket.size() >= sizeof addr.sun_path) throw GuestAgentError("guest agent socket path too long: " + socket);
  std::memcpy(addr.sun_path, socket.c_str(), socket.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw GuestAgentError(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw GuestAgentError("cannot connect to the guest agent channel " + socket + ": " + std::strerror(errno));

  std::mt19937_64 rng(std::random_device{}());
  const int64_t id = static_cast<int64_t>(rng() >> 2);
  SendAll(fd.get(), "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":" + std::to_string(id) + "}}\n",
          socket);
  std::string buf;
  const auto sync_deadline = Clock::now() + sync_timeout;
  for (bool synced = false; !synced;) {
    // Skip to the agent's 0xFF, then read the line after it: our id, or an earlier client's.
    const size_t ff = buf.find('\xff');
    if (ff != std::string::npos) {
      std::string rest = buf.substr(ff + 1);
      if (auto line = TakeLine(&rest)) {
        buf = rest;
        const json reply = json::parse(*line, nullptr, /*allow_exceptions=*/false);
        synced = reply.is_object() && reply.contains("return") && reply["return"] == id;
        continue;
      }
    } else {
      buf.clear();
    }
    if (!ReadSome(fd.get(), &buf, sync_deadline, socket))
      throw GuestAgentError("the guest agent does not answer on " + socket +
                            " (no reply to guest-sync-delimited within " + Seconds(sync_timeout) +
                            "; is qemu-guest-agent running in the guest?)");
  }

  SendAll(fd.get(), json{{"execute", command}}.dump() + "\n", socket);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    while (auto line = TakeLine(&buf)) {
      if (line->find_first_not_of(" \t\r\xff") == std::string::npos) continue;
      const json reply = json::parse(*line, nullptr, /*allow_exceptions=*/false);
      if (reply.is_discarded() || !reply.is_object())
        throw GuestAgentError("the guest agent's reply to " + command + " is not a JSON object: " + *line);
      if (reply.contains("return")) return reply["return"];
      if (reply.contains("error"))
        throw GuestAgentError("the guest agent failed " + command + ": " +
                              reply["error"].value("desc", reply["error"].dump()));
    }
    if (!ReadSome(fd.get(), &buf, deadline, socket))
      throw GuestAgentError("the guest agent did not answer " + command + " within " + Seconds(timeout) + " on " +
                            socket);
  }
}

}  // namespace qlaunch::launcher
