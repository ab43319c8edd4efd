#include "launcher/device_host.h"

namespace qlaunch::launcher {

namespace {

class FirmwareHost : public DeviceHostPart {
 public:
  void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers* fds) override {}
  void Create(const DeviceHostContext& ctx, const std::function<void(int, int)>& place) override {}
  void Undo() noexcept override {}
};

}  // namespace

std::unique_ptr<DeviceHostPart> MakeFirmwareHost() { return std::make_unique<FirmwareHost>(); }

}  // namespace qlaunch::launcher
