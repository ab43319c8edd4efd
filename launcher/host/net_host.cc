#include "launcher/host/net_host.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/unique_fd.h"
#include "launcher/host/device_host.h"
#include "qemu_cmd/net_plan.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTunDevice = "/dev/net/tun";
constexpr int kCapNetAdmin = 12;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

bool HasCapNetAdmin() {
  if (::geteuid() == 0) return true;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> kCapNetAdmin) & 1;
  return false;
}

void CopyName(ifreq* ifr, const std::string& name) {
  if (name.size() >= IFNAMSIZ) throw std::runtime_error("interface name '" + name + "' is too long");
  std::memcpy(ifr->ifr_name, name.c_str(), name.size() + 1);
}

// One ioctl on an ordinary socket (the interface ioctls need one).
void IfIoctl(unsigned long request, ifreq* ifr, const char* what) {
  UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) throw std::runtime_error(Errno("socket"));
  if (::ioctl(sock.get(), request, ifr) < 0)
    throw std::runtime_error(Errno(std::string(what) + " " + ifr->ifr_name));
}

void SetMac(const std::string& tap, const std::string& mac) {
  ifreq ifr{};
  CopyName(&ifr, tap);
  ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
  unsigned b[6];
  if (std::sscanf(mac.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
    throw std::logic_error("bad MAC " + mac);
  for (int i = 0; i < 6; ++i) ifr.ifr_hwaddr.sa_data[i] = static_cast<char>(b[i]);
  IfIoctl(SIOCSIFHWADDR, &ifr, "setting the MAC of");
}

int GetMtu(const std::string& name) {
  ifreq ifr{};
  CopyName(&ifr, name);
  IfIoctl(SIOCGIFMTU, &ifr, "reading the MTU of");
  return ifr.ifr_mtu;
}

void SetMtu(const std::string& name, int mtu) {
  ifreq ifr{};
  CopyName(&ifr, name);
  ifr.ifr_mtu = mtu;
  IfIoctl(SIOCSIFMTU, &ifr, "setting the MTU of");
}

void AttachToBridge(const std::string& bridge, const std::string& tap) {
  ifreq index{};
  CopyName(&index, tap);
  IfIoctl(SIOCGIFINDEX, &index, "reading the index of");
  ifreq ifr{};
  CopyName(&ifr, bridge);
  ifr.ifr_ifindex = index.ifr_ifindex;
  IfIoctl(SIOCBRADDIF, &ifr, ("attaching " + tap + " to bridge").c_str());
}

void BringUp(const std::string& name) {
  ifreq ifr{};
  CopyName(&ifr, name);
  IfIoctl(SIOCGIFFLAGS, &ifr, "reading the flags of");
  ifr.ifr_flags |= IFF_UP;
  IfIoctl(SIOCSIFFLAGS, &ifr, "bringing up");
}

struct PlannedTap {
  size_t nic = 0;       // index in devices.interfaces
  int fd_index = -1;    // the reserved slot QEMU inherits it on
  std::string name;     // requested ("" = the kernel's vnet%d)
  std::string actual;   // after Create
};

class NetHost : public DeviceHostPart {
 public:
  void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers* fds) override {
    def_ = ctx.def;
    const auto& nics = def_->devices.interfaces;
    res->net_fds.assign(nics.size(), -1);
    res->net_taps.assign(nics.size(), "");
    std::vector<Diagnostic> problems;
    auto fail = [&](const domain::Interface& nic, int line, const char* element, std::string msg) {
      problems.push_back(qemu::PlanError(*def_, line ? line : nic.line, element, std::move(msg)));
    };
    bool tun_checked = false;
    std::set<std::string> names;
    for (size_t i = 0; i < nics.size(); ++i) {
      const domain::Interface& nic = nics[i];
      if (nic.type != "ethernet" && nic.type != "bridge") continue;
      if (!tun_checked) {
        tun_checked = true;
        UniqueFd tun(::open(kTunDevice, O_RDWR | O_CLOEXEC));
        if (tun.get() < 0)
          fail(nic, 0, "interface", Errno(std::string("interface type '") + nic.type + "' needs a tap: " + kTunDevice));
        else if (!HasCapNetAdmin())
          fail(nic, 0, "interface", "interface type '" + nic.type + "' needs a tap, and creating one needs root or "
                                    "CAP_NET_ADMIN (use type='user' otherwise)");
      }
      if (nic.type == "bridge") {
        const fs::path dev = fs::path("/sys/class/net") / nic.source_bridge;
        if (!fs::exists(dev))
          fail(nic, 0, "source", "bridge '" + nic.source_bridge + "' does not exist (create it, e.g. `ip link add " +
                                     nic.source_bridge + " type bridge && ip link set " + nic.source_bridge + " up`)");
        else if (!fs::exists(dev / "bridge"))
          fail(nic, 0, "source", "'" + nic.source_bridge + "' is not a bridge");
      }
      if (!nic.target_dev.empty()) {
        const fs::path dev = fs::path("/sys/class/net") / nic.target_dev;
        if (!names.insert(nic.target_dev).second)
          fail(nic, nic.target_line, "target", "tap '" + nic.target_dev + "' is named by two interfaces");
        else if (nic.target_managed && fs::exists(dev))
          fail(nic, nic.target_line, "target", "tap '" + nic.target_dev + "' already exists (qlaunch creates it; "
                                               "for an existing tap say <target dev='" + nic.target_dev +
                                               "' managed='no'/>)");
        else if (!nic.target_managed && !fs::exists(dev / "tun_flags"))
          fail(nic, nic.target_line, "target", "tap '" + nic.target_dev + "' (managed='no') " +
                                               (fs::exists(dev) ? "is not a tap" : "does not exist"));
      }
      PlannedTap tap;
      tap.nic = i;
      tap.name = nic.target_dev;
      tap.fd_index = fds->Take();
      res->net_fds[i] = tap.fd_index;
      res->net_taps[i] = nic.target_dev;
      taps_.push_back(std::move(tap));
    }
    if (!problems.empty()) throw DiagnosticError(std::move(problems));
  }

  void Create(const DeviceHostContext& ctx, const std::function<void(int, int)>& place) override {
    const auto& nics = def_->devices.interfaces;
    const std::vector<std::string> macs = qemu::InterfaceMacs(*def_);
    for (PlannedTap& tap : taps_) {
      const domain::Interface& nic = nics[tap.nic];
      UniqueFd fd(::open(kTunDevice, O_RDWR | O_CLOEXEC));
      if (fd.get() < 0) throw std::runtime_error(Errno(kTunDevice));
      ifreq ifr{};
      CopyName(&ifr, tap.name.empty() ? "vnet%d" : tap.name);
      ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
      if (nic.model == "virtio") ifr.ifr_flags |= IFF_VNET_HDR;  // as libvirt: QEMU then offloads
      if (nic.target_managed) ifr.ifr_flags |= IFF_TUN_EXCL;      // never take over an existing tap
      int rc = ::ioctl(fd.get(), TUNSETIFF, &ifr);
      if (rc < 0 && errno == EINVAL && !nic.target_managed && (ifr.ifr_flags & IFF_VNET_HDR)) {
        ifr.ifr_flags &= ~IFF_VNET_HDR;  // an unmanaged tap made without vnet_hdr
        rc = ::ioctl(fd.get(), TUNSETIFF, &ifr);
      }
      if (rc < 0)
        throw DiagnosticError(qemu::PlanError(*def_, nic.line, "interface",
                                              Errno("creating tap '" + std::string(ifr.ifr_name) + "' (TUNSETIFF)")));
      tap.actual = ifr.ifr_name;
      if (nic.target_managed) {
        SetMac(tap.actual, TapMac(macs[tap.nic]));
        if (nic.type == "bridge") {
          SetMtu(tap.actual, GetMtu(nic.source_bridge));
          AttachToBridge(nic.source_bridge, tap.actual);
        }
        BringUp(tap.actual);
      }
      place(tap.fd_index, fd.get());
      // ours closes here: the reserved copy (then QEMU's) keeps the tap alive
    }
  }

  // Create closed every fd of its own: the taps live only as long as the reserved copies and
  // QEMU's, which DeviceHostSide and the QEMU guard close.
  void Undo() noexcept override {}

  void Summary(nlohmann::json* out) const override {
    nlohmann::json list = nlohmann::json::array();
    if (def_) {
      const std::vector<std::string> macs = qemu::InterfaceMacs(*def_);
      const auto& nics = def_->devices.interfaces;
      for (size_t i = 0; i < nics.size(); ++i) {
        std::string tap;
        for (const PlannedTap& t : taps_)
          if (t.nic == i) tap = t.actual.empty() ? t.name : t.actual;
        list.push_back({{"type", nics[i].type}, {"model", nics[i].model}, {"mac", macs[i]}, {"tap", tap},
                        {"bridge", nics[i].source_bridge}});
      }
    }
    (*out)["interfaces"] = std::move(list);
  }

 private:
  const domain::DomainDef* def_ = nullptr;
  std::vector<PlannedTap> taps_;
};

}  // namespace

std::string TapMac(const std::string& guest_mac) {
  return guest_mac.size() == 17 ? "fe" + guest_mac.substr(2) : guest_mac;
}

std::unique_ptr<DeviceHostPart> MakeNetHost() { return std::make_unique<NetHost>(); }

}  // namespace qlaunch::launcher
