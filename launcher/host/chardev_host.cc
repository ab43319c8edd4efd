// The host side of the character devices: every UNIX socket QEMU serves (<source mode='bind'>)
// is made by qlaunch and handed to QEMU as a listening fd, as libvirt 9.0 does. A channel
// without a path (the guest agent's, as virt-install writes it) gets its socket in the
// domain's state dir (<dir>/channel/<name>), which QEMU's unprivileged user cannot enter: only
// root (the one who runs qlaunch and the agent client) connects. A socket at a path the XML
// gives is owned by QEMU's user, as if QEMU had made it.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "launcher/host/device_host.h"
#include "qemu_cmd/chardev_plan.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

// The chardev's description for messages: "<channel> at FILE:LINE".
std::string Where(const domain::DomainDef& def, size_t index) {
  const domain::CharDev& c = def.devices.chardevs[index];
  return "<" + c.kind + "> at " + def.file + ":" + std::to_string(c.line);
}

class ChardevHost : public DeviceHostPart {
 public:
  void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers* fds) override {
    channel_dir_ = ctx.domain_dir / "channel";
    res->channel_dir = channel_dir_.string();
    for (const qemu::ChardevListenSocket& s : qemu::ChardevListenSockets(*ctx.def, res->channel_dir)) {
      if (s.path.size() >= sizeof(sockaddr_un{}.sun_path))
        throw std::runtime_error("the socket " + s.path + " of the " + Where(*ctx.def, s.index) + " is longer than " +
                                 std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes" +
                                 (s.in_channel_dir ? " (choose a shorter QLAUNCH_STATE_DIR)" : ""));
      if (!s.in_channel_dir) {
        std::error_code ec;
        fs::file_status st = fs::symlink_status(s.path, ec);
        if (fs::exists(st) && !fs::is_socket(st))
          throw std::runtime_error("the socket path " + s.path + " of the " + Where(*ctx.def, s.index) +
                                   " is taken by a file that is not a socket");
        if (!fs::is_directory(fs::path(s.path).parent_path(), ec))
          throw std::runtime_error("the directory of the socket " + s.path + " of the " + Where(*ctx.def, s.index) +
                                   " does not exist");
      }
      Socket sock;
      sock.path = s.path;
      sock.own = s.in_channel_dir;
      sock.fd_index = fds->Take();
      res->chardev_fds[s.index] = sock.fd_index;
      sockets_.push_back(std::move(sock));
    }
  }

  void Create(const DeviceHostContext& ctx, const std::function<void(int, int)>& place) override {
    for (Socket& s : sockets_) {
      if (s.own && !made_dir_) {
        if (::mkdir(channel_dir_.c_str(), 0700) != 0 && errno != EEXIST)
          throw std::runtime_error("cannot create " + channel_dir_.string() + ": " + std::strerror(errno));
        made_dir_ = true;
      }
      int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) throw std::runtime_error(std::string("cannot create a socket: ") + std::strerror(errno));
      try {
        Listen(fd, s, ctx);
      } catch (...) {
        ::close(fd);
        throw;
      }
      place(s.fd_index, fd);
      ::close(fd);  // the reserved number holds it now
    }
  }

  void Undo() noexcept override {
    for (Socket& s : sockets_)
      if (s.made) ::unlink(s.path.c_str()), s.made = false;
    if (made_dir_) ::rmdir(channel_dir_.c_str()), made_dir_ = false;
  }

  void Summary(nlohmann::json* out) const override {
    if (sockets_.empty()) return;
    nlohmann::json list = nlohmann::json::array();
    for (const Socket& s : sockets_) list.push_back(s.path);
    (*out)["chardev_sockets"] = list;
  }

 private:
  struct Socket {
    std::string path;
    bool own = false;   // in the channel dir
    int fd_index = -1;
    bool made = false;
  };

  static void Listen(int fd, Socket& s, const DeviceHostContext& ctx) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, s.path.c_str(), s.path.size() + 1);
    // A stale socket at a path the XML gives (a previous run's): QEMU would remove it too.
    if (!s.own) {
      std::error_code ec;
      if (fs::is_socket(fs::symlink_status(s.path, ec))) ::unlink(s.path.c_str());
    }
    mode_t old = ::umask(0177);  // 0600 from the start
    int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    int err = errno;
    ::umask(old);
    if (rc != 0) throw std::runtime_error("cannot bind the chardev socket " + s.path + ": " + std::strerror(err));
    s.made = true;
    if (!s.own && ctx.user && ctx.user->change && ::lchown(s.path.c_str(), ctx.user->uid, ctx.user->gid) != 0)
      throw std::runtime_error("cannot give the chardev socket " + s.path + " to " + ctx.user->user + ": " +
                               std::strerror(errno));
    if (::listen(fd, 1) != 0) throw std::runtime_error("cannot listen on " + s.path + ": " + std::strerror(errno));
  }

  fs::path channel_dir_;
  std::vector<Socket> sockets_;
  bool made_dir_ = false;
};

}  // namespace

std::unique_ptr<DeviceHostPart> MakeChardevHost() { return std::make_unique<ChardevHost>(); }

}  // namespace qlaunch::launcher
