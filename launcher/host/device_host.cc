#include "launcher/host/device_host.h"

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {

namespace {

// Resource fields hold fd indexes after Plan; these become numbers in the reserved block.
void MapFds(qemu::DeviceResources* res, int first) {
  for (int& fd : res->net_fds)
    if (fd >= 0) fd += first;
  for (auto& [index, fd] : res->chardev_fds)
    if (fd >= 0) fd += first;
}

}  // namespace

DeviceHostSide::DeviceHostSide(const domain::DomainDef& def, const std::filesystem::path& state_root,
                               const QemuUser& user) {
  ctx_.def = &def;
  ctx_.state_root = state_root;
  ctx_.domain_dir = state_root / def.name;
  ctx_.user = &user;
  parts_.push_back(MakeNetHost());
  parts_.push_back(MakeChardevHost());
  parts_.push_back(MakeGraphicsHost());
  parts_.push_back(MakeFirmwareHost());
  FdNumbers fds;
  for (auto& part : parts_) part->Plan(ctx_, &res_, &fds);
  if (fds.count() > 0) {
    first_fd_ = FreeFdBlock(3, static_cast<int>(fds.count()));
    reservation_ = FdReservation(first_fd_, static_cast<int>(fds.count()));
    MapFds(&res_, first_fd_);
  }
}

DeviceHostSide::~DeviceHostSide() {
  if (kept_ || !created_) return;
  for (auto it = parts_.rbegin(); it != parts_.rend(); ++it) (*it)->Undo();
}

void DeviceHostSide::Create() {
  created_ = true;
  auto place = [this](int index, int fd) { reservation_.Place(first_fd_ + index, fd); };
  for (auto& part : parts_) part->Create(ctx_, place);
}

void DeviceHostSide::HandedOver() { reservation_.Close(); }

nlohmann::json DeviceHostSide::Summary() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& part : parts_) part->Summary(&out);
  return out;
}

}  // namespace qlaunch::launcher
