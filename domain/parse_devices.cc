// <devices>: the emulator and the dispatch of each device element to its family's parser
// (domain/parse_<family>.cc).
#include <algorithm>

#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

bool OneOf(std::string_view value, std::initializer_list<std::string_view> choices) {
  return std::find(choices.begin(), choices.end(), value) != choices.end();
}

std::string Join(std::initializer_list<std::string_view> choices) {
  std::string out;
  for (std::string_view c : choices) out += (out.empty() ? "" : "|") + std::string(c);
  return out;
}

template <typename T>
void Append(std::vector<T>* to, std::optional<T> item) {
  if (item) to->push_back(std::move(*item));
}

}  // namespace

Support Classify(ParseContext& ctx, const xmlNode* node, std::string_view what, const std::string& value,
                 std::initializer_list<std::string_view> supported,
                 std::initializer_list<std::string_view> libvirt_only) {
  if (OneOf(value, supported)) return Support::kYes;
  if (OneOf(value, libvirt_only)) {
    ctx.Unsupported(node, std::string(what) + " '" + value + "' not supported by qlaunch (supported: " +
                              Join(supported) + "), element ignored");
    return Support::kNo;
  }
  ctx.Fail(node, "unknown " + std::string(what) + " '" + value + "' (expected " + Join(supported) + ")");
}

Devices ParseDevices(ParseContext& ctx, const xmlNode* node) {
  Devices devices;
  if (const xmlNode* emulator = UniqueChild(ctx, node, "emulator")) {
    devices.emulator = NodeText(emulator);
    devices.emulator_line = NodeLine(emulator);
  }
  if (const xmlNode* balloon = UniqueChild(ctx, node, "memballoon")) {
    devices.memballoon = ParseMemBalloon(ctx, balloon);
  }
  for (const xmlNode* child : ElementChildren(node)) {
    std::string name = NodeName(child);
    if (name == "disk") {
      if (auto disk = ParseDisk(ctx, child)) InsertDisk(&devices.disks, std::move(*disk));  // libvirt's order
    } else if (name == "controller") {
      Append(&devices.controllers, ParseController(ctx, child));
    } else if (name == "interface") {
      Append(&devices.interfaces, ParseInterface(ctx, child));
    } else if (name == "serial" || name == "console" || name == "channel") {
      Append(&devices.chardevs, ParseCharDev(ctx, child));
    } else if (name == "graphics") {
      Append(&devices.graphics, ParseGraphics(ctx, child));
    } else if (name == "video") {
      Append(&devices.videos, ParseVideo(ctx, child));
    } else if (name == "input") {
      Append(&devices.inputs, ParseInput(ctx, child));
    } else if (name == "sound") {
      Append(&devices.sounds, ParseSound(ctx, child));
    } else if (name == "redirdev") {
      Append(&devices.redirdevs, ParseRedirDev(ctx, child));
    } else if (name == "rng") {
      Append(&devices.rngs, ParseRng(ctx, child));
    } else if (name == "watchdog") {
      Append(&devices.watchdogs, ParseWatchdog(ctx, child));
    } else if (name == "memory") {
      Append(&devices.memory, ParseMemoryDevice(ctx, child));
    } else if (name == "panic") {
      std::string model = NodeAttr(child, "model").value_or("isa");
      if (Classify(ctx, child, "panic model", model, {"isa"}, {"pseries", "hyperv", "s390", "pvpanic"}) ==
          Support::kYes) {
        if (devices.panic) ctx.Fail(child, "more than one <panic model='isa'>");
        devices.panic = true;
        devices.panic_line = NodeLine(child);
      }
    }
  }
  return devices;
}

}  // namespace qlaunch::domain
