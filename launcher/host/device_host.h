// The host side of a domain's devices for `qlaunch start`: taps (net), listening sockets
// (unix chardevs, the agent channel), VNC/SPICE ports, the UEFI vars copy. Two steps, so that
// nothing changes on the host before pre-flight has passed:
//   1. the constructor decides everything the argv names (fd numbers, held by /dev/null
//      placeholders; socket paths; ports; tap names) and checks what can be checked without
//      changing anything (the bridge exists, a tap name fits, a port is free);
//   2. Create() makes it all, after the state dir is claimed, and puts each fd on its number.
// The destructor undoes what Create made (a tap qlaunch created goes away with the last fd,
// which QEMU holds once spawned; sockets are unlinked). HandedOver() closes qlaunch's copies
// once QEMU has inherited them.
//
// Each family owns one part (launcher/host/<family>_host.{h,cc}).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "domain/domain_def.h"
#include "launcher/host/qemu_spawn.h"
#include "launcher/host/qemu_user.h"
#include "qemu_cmd/device_plan.h"

namespace qlaunch::launcher {

// Hands out fd numbers inside one reserved block.
class FdNumbers {
 public:
  int Take() { return static_cast<int>(count_++); }  // an index; Number() maps it once reserved
  size_t count() const { return count_; }

 private:
  size_t count_ = 0;
};

struct DeviceHostContext {
  const domain::DomainDef* def = nullptr;
  std::filesystem::path domain_dir;  // <state root>/<name> (exists from Create() on)
  std::filesystem::path state_root;
  const QemuUser* user = nullptr;
};

// One family's host side. Plan: decide and check, fill `res`, take fd indexes from `fds`
// (the resource fields hold indexes until DeviceHostSide maps them to numbers). Create: make
// it, placing fds with `place(index, fd)`. Undo: remove what Create made. Summary: what
// list/dominfo show (e.g. {"taps": [...]} merged into one object).
class DeviceHostPart {
 public:
  virtual ~DeviceHostPart() = default;
  virtual void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers* fds) = 0;
  virtual void Create(const DeviceHostContext& ctx, const std::function<void(int index, int fd)>& place) = 0;
  virtual void Undo() noexcept = 0;
  virtual void Summary(nlohmann::json* out) const {}
};

class DeviceHostSide {
 public:
  DeviceHostSide(const domain::DomainDef& def, const std::filesystem::path& state_root, const QemuUser& user);
  ~DeviceHostSide();
  DeviceHostSide(const DeviceHostSide&) = delete;
  DeviceHostSide& operator=(const DeviceHostSide&) = delete;

  // With fd numbers (not indexes) in it.
  const qemu::DeviceResources& resources() const { return res_; }
  void Create();
  const std::vector<int>& fds() const { return reservation_.fds(); }
  void HandedOver();
  // The start succeeded: the destructor leaves everything to QEMU (and to destroy).
  void Keep() { kept_ = true; }
  nlohmann::json Summary() const;

 private:
  DeviceHostContext ctx_;
  qemu::DeviceResources res_;
  std::vector<std::unique_ptr<DeviceHostPart>> parts_;
  FdReservation reservation_;
  int first_fd_ = -1;
  bool created_ = false;
  bool kept_ = false;
};

// The parts, one per family (each in its own file).
std::unique_ptr<DeviceHostPart> MakeNetHost();       // launcher/host/net_host.cc
std::unique_ptr<DeviceHostPart> MakeChardevHost();   // launcher/host/chardev_host.cc
std::unique_ptr<DeviceHostPart> MakeGraphicsHost();  // launcher/host/graphics_host.cc
std::unique_ptr<DeviceHostPart> MakeFirmwareHost();  // launcher/host/firmware_host.cc

}  // namespace qlaunch::launcher
