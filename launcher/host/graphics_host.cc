// The host side of <graphics>: the TCP ports of VNC and SPICE displays. For autoport (and
// port='-1') the first free port from 5900, found as libvirt's port allocator does it: a bind
// test on the wildcard addresses (IPv4 and IPv6), so a port taken on any address is skipped.
// A fixed port that is taken is an error naming the element. Nothing is created: QEMU binds
// the port itself (a process that takes it in between makes QEMU fail, as with libvirt).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include <nlohmann/json.hpp>

#include "launcher/host/device_host.h"
#include "launcher/host/graphics_host.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::launcher {

namespace {

// True when a TCP socket can bind `port` on `family`'s wildcard address; an address family the
// host lacks counts as free.
bool BindFree(int family, int port) {
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno == EAFNOSUPPORT;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    rc = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    rc = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  bool free = rc == 0 || (family == AF_INET6 && errno == EADDRNOTAVAIL);
  close(fd);
  return free;
}

class GraphicsHost : public DeviceHostPart {
 public:
  explicit GraphicsHost(PortProbe probe) : probe_(std::move(probe)) {}

  void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers*) override {
    const auto& graphics = ctx.def->devices.graphics;
    std::set<int> used;  // this domain's own, so vnc and spice get different ones
    for (const domain::Graphics& g : graphics)
      if (g.port && !g.listen_none) used.insert(*g.port);
    for (size_t i = 0; i < graphics.size(); ++i) {
      const domain::Graphics& g = graphics[i];
      Shown shown{g.type, g.listen_none ? "none" : (g.listen.empty() ? "127.0.0.1" : g.listen), 0};
      if (!g.listen_none && g.port) {
        if (!probe_(*g.port))
          throw DiagnosticError(qemu::PlanError(*ctx.def, g.line, "graphics",
                                                g.type + " port " + std::to_string(*g.port) +
                                                    " is already in use on this host"));
        shown.port = *g.port;
      } else if (!g.listen_none && g.autoport) {
        int port = 5900;
        while (port <= 65535 && (used.count(port) || !probe_(port))) ++port;
        if (port > 65535)
          throw DiagnosticError(qemu::PlanError(*ctx.def, g.line, "graphics",
                                                "no free port for " + g.type + " between 5900 and 65535"));
        used.insert(port);
        res->graphics_ports[i] = port;
        shown.port = port;
      }
      shown_.push_back(std::move(shown));
    }
  }
  void Create(const DeviceHostContext&, const std::function<void(int, int)>&) override {}
  void Undo() noexcept override {}
  void Summary(nlohmann::json* out) const override {
    if (shown_.empty()) return;
    nlohmann::json list = nlohmann::json::array();
    for (const Shown& s : shown_) list.push_back({{"type", s.type}, {"listen", s.listen}, {"port", s.port}});
    (*out)["graphics"] = std::move(list);
  }

 private:
  struct Shown {
    std::string type, listen;
    int port = 0;  // 0: no TCP port
  };
  PortProbe probe_;
  std::vector<Shown> shown_;
};

}  // namespace

bool TcpPortFree(int port) { return BindFree(AF_INET, port) && BindFree(AF_INET6, port); }

std::unique_ptr<DeviceHostPart> MakeGraphicsHost(PortProbe probe) { return std::make_unique<GraphicsHost>(std::move(probe)); }
std::unique_ptr<DeviceHostPart> MakeGraphicsHost() { return MakeGraphicsHost(TcpPortFree); }

}  // namespace qlaunch::launcher
