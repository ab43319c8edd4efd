#include "launcher/device_host.h"

namespace qlaunch::launcher {

namespace {

class GraphicsHost : public DeviceHostPart {
 public:
  void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers* fds) override {}
  void Create(const DeviceHostContext& ctx, const std::function<void(int, int)>& place) override {}
  void Undo() noexcept override {}
};

}  // namespace

std::unique_ptr<DeviceHostPart> MakeGraphicsHost() { return std::make_unique<GraphicsHost>(); }

}  // namespace qlaunch::launcher
