#include "launcher/device_host.h"

namespace qlaunch::launcher {

namespace {

class NetHost : public DeviceHostPart {
 public:
  void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers* fds) override {}
  void Create(const DeviceHostContext& ctx, const std::function<void(int, int)>& place) override {}
  void Undo() noexcept override {}
};

}  // namespace

std::unique_ptr<DeviceHostPart> MakeNetHost() { return std::make_unique<NetHost>(); }

}  // namespace qlaunch::launcher
