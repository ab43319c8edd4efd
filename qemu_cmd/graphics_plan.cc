// <graphics> and the audio backend: -audiodev, -vnc, -spice as libvirt 9.0 renders them.
#include "qemu_cmd/graphics_plan.h"

#include <nlohmann/json.hpp>

#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

// libvirt's default listen address (qemu.conf vnc_listen / spice_listen).
constexpr const char* kDefaultListen = "127.0.0.1";

PlannedDevice HostOnly(std::string element, int line) {
  PlannedDevice d;
  d.family = "graphics";
  d.element = std::move(element);
  d.line = line;
  return d;
}

std::string VncHead(const domain::Graphics& g, int port) {
  if (g.listen_none) return "none";
  std::string host = g.listen.empty() ? kDefaultListen : g.listen;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6
  return host + ":" + std::to_string(port - 5900);
}

std::string SpiceValue(const domain::Graphics& g, int port) {
  KeyValueBuilder spice;
  if (port > 0) {
    spice.Add("port", port);
    spice.Add("addr", std::string_view(g.listen.empty() ? kDefaultListen : g.listen));
  } else {
    spice.Add("port", 0);  // no TCP listener (listen type='none', or no port and no autoport)
  }
  spice.AddBool("disable-ticketing", true);  // qlaunch sets no passwords (parse_graphics.cc)
  if (!g.image_compression.empty()) spice.Add("image-compression", std::string_view(g.image_compression));
  spice.AddBool("seamless-migration", true);
  return spice.str();
}

}  // namespace

int GraphicsPort(const DeviceContext& ctx, size_t index) {
  const domain::Graphics& g = ctx.def->devices.graphics.at(index);
  if (g.listen_none) return 0;
  if (g.port) return *g.port;
  if (!g.autoport) return 0;
  const auto& picked = ctx.opts->devices.graphics_ports;
  if (auto it = picked.find(index); it != picked.end()) return it->second;
  // domxml-to-native: libvirt's pretend ports (qemuProcessGraphicsAllocatePorts without
  // allocating); `start` picks a free one (launcher/host/graphics_host.cc).
  return g.type == "vnc" ? 5900 : 5901;
}

void PlanAudioAndDisplays(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const domain::Devices& devs = ctx.def->devices;
  bool spice = false;
  std::map<std::string, int> seen;
  for (const domain::Graphics& g : devs.graphics) {
    spice |= g.type == "spice";
    if (seen.count(g.type))
      throw DiagnosticError(PlanError(*ctx.def, g.line, "graphics",
                                      "only 1 graphics device of each type is supported (another " + g.type +
                                          " at line " + std::to_string(seen[g.type]) + ")"));
    seen[g.type] = g.line;
  }
  // libvirt 9.0 always adds an <audio> backend; qlaunch renders it when a display or a sound
  // card uses it.
  if (!devs.graphics.empty() || !devs.sounds.empty()) {
    PlannedDevice audio = HostOnly("audio", 0);
    nlohmann::ordered_json a = {{"id", kAudioId}, {"driver", spice ? "spice" : "none"}};
    audio.host_args.push_back({"-audiodev", a.dump()});
    out->push_back(std::move(audio));
  }
  for (size_t i = 0; i < devs.graphics.size(); ++i) {
    const domain::Graphics& g = devs.graphics[i];
    PlannedDevice d = HostOnly("graphics", g.line);
    int port = GraphicsPort(ctx, i);
    if (g.type == "vnc") {
      KeyValueBuilder vnc(VncHead(g, port));
      vnc.Add("audiodev", kAudioId);
      d.host_args.push_back({"-vnc", vnc.str()});
    } else {
      d.host_args.push_back({"-spice", SpiceValue(g, port)});
    }
    out->push_back(std::move(d));
  }
}

void PlanGraphicsDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  UsbPorts usb = AssignUsbPorts(ctx);
  PlanInputDevices(ctx, usb, out);
  PlanAudioAndDisplays(ctx, out);
  PlanVideoDevices(ctx, out);
  PlanSoundDevices(ctx, out);
  PlanRedirDevices(ctx, usb, out);
}

}  // namespace qlaunch::qemu
