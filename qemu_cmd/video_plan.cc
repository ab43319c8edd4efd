// <video>: the primary display adapter (first in PCI order) and secondary ones, with libvirt
// 9.0's properties and defaults. A domain with graphics but no <video> gets libvirt's default
// cirrus-vga.
#include <algorithm>

#include "qemu_cmd/graphics_plan.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

[[noreturn]] void Fail(const DeviceContext& ctx, const domain::Video& v, const std::string& msg) {
  throw DiagnosticError(PlanError(*ctx.def, v.line, "video", msg));
}

unsigned RoundUpPowerOfTwo(unsigned v) {
  unsigned p = 1;
  while (p < v && p < (1u << 31)) p <<= 1;
  return p;
}

// KiB -> MiB for the *_mb properties; libvirt refuses less than 1 MiB.
unsigned MiB(const DeviceContext& ctx, const domain::Video& v, const char* what, unsigned kib) {
  if (kib < 1024) Fail(ctx, v, std::string("value for '") + what + "' must be at least 1 MiB (1024 KiB)");
  return kib / 1024;
}

std::string Bytes(unsigned kib) { return std::to_string(uint64_t{kib} * 1024); }

PlannedDevice VideoDevice(const DeviceContext& ctx, const domain::Video& v, bool primary, unsigned index) {
  PlannedDevice d;
  d.family = "graphics";
  d.element = "video";
  d.line = v.line;
  d.id = "video" + std::to_string(index);
  d.AtPci(primary ? PciRank::kPrimaryVideo : PciRank::kVideo, v.address);
  const std::string heads = std::to_string(v.heads.value_or(1));
  if (v.model == "vga" || v.model == "cirrus" || v.model == "bochs") {
    if (!primary) Fail(ctx, v, "video type '" + v.model + "' is only valid as primary video device");
    // vram: default 16 MiB, rounded up to a power of two (libvirt's post-parse).
    unsigned vram = RoundUpPowerOfTwo(v.vram.value_or(16384));
    if (v.model == "vga") {
      d.driver = "VGA";
      d.props.push_back({"vgamem_mb", std::to_string(MiB(ctx, v, "vram", vram))});
    } else if (v.model == "bochs") {
      d.driver = "bochs-display";
      MiB(ctx, v, "vram", vram);
      d.props.push_back({"vgamem", Bytes(vram)});
    } else {
      d.driver = "cirrus-vga";  // libvirt gives cirrus no size
    }
  } else if (v.model == "virtio") {
    d.driver = primary ? "virtio-vga" : "virtio-gpu-pci";
    d.props.push_back({"max_outputs", heads});
  } else if (v.model == "qxl") {
    d.driver = primary ? "qxl-vga" : "qxl";
    unsigned vgamem = v.vgamem.value_or(16384);
    if (RoundUpPowerOfTwo(vgamem) != vgamem) Fail(ctx, v, "value for 'vgamem' must be power of two");
    d.props.push_back({"max_outputs", heads});
    d.props.push_back({"ram_size", Bytes(v.ram.value_or(65536))});
    d.props.push_back({"vram_size", Bytes(v.vram.value_or(65536))});
    d.props.push_back({"vram64_size_mb", std::to_string(v.vram64.value_or(0) / 1024)});
    d.props.push_back({"vgamem_mb", std::to_string(MiB(ctx, v, "vgamem", vgamem))});
  } else {
    Fail(ctx, v, "video model '" + v.model + "' is not supported");
  }
  return d;
}

}  // namespace

void PlanVideoDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  std::vector<domain::Video> videos = ctx.def->devices.videos;
  if (videos.empty()) {
    if (ctx.def->devices.graphics.empty()) return;
    domain::Video implicit;  // libvirt adds one for a display: cirrus on x86
    implicit.model = "cirrus";
    videos.push_back(implicit);
  }
  // primary='yes' moves a video first (libvirt's post-parse); only one may say so.
  auto primary = videos.end();
  for (auto it = videos.begin(); it != videos.end(); ++it) {
    if (!it->primary) continue;
    if (primary != videos.end()) Fail(ctx, *it, "Only one primary video device is supported");
    primary = it;
  }
  if (primary != videos.end()) std::rotate(videos.begin(), primary, primary + 1);
  for (const domain::Video& v : videos)
    if (v.model == "none" && videos.size() > 1)
      Fail(ctx, v, "a 'none' video must be the only video device");
  if (videos.front().model == "none") return;
  for (size_t i = 0; i < videos.size(); ++i)
    out->push_back(VideoDevice(ctx, videos[i], i == 0, static_cast<unsigned>(i)));
}

}  // namespace qlaunch::qemu
