// <address> and <boot order> of a device element: shared by every device family.
#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

// libvirt writes PCI numbers in hex ("0x1f") and drive numbers in decimal; it reads both.
std::optional<uint64_t> ParseNumber(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty() || s.size() > 8) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (base == 16 && c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (base == 16 && c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

std::optional<unsigned> Number(ParseContext& ctx, const xmlNode* node, const char* attr, unsigned max) {
  std::optional<std::string> text = NodeAttr(node, attr);
  if (!text) return std::nullopt;
  std::optional<uint64_t> v = ParseNumber(TrimSpace(*text));
  if (!v || *v > max)
    ctx.Fail(node, std::string("invalid address ") + attr + " '" + *text + "' (at most " + std::to_string(max) + ")");
  return static_cast<unsigned>(*v);
}

}  // namespace

DeviceAddress ParseAddress(ParseContext& ctx, const xmlNode* device) {
  DeviceAddress a;
  const xmlNode* node = UniqueChild(ctx, device, "address");
  if (!node) return a;
  a.line = NodeLine(node);
  a.type = RequiredAttr(ctx, node, "type");
  if (a.type == "pci") {
    a.domain = Number(ctx, node, "domain", 0xffff);
    a.bus = Number(ctx, node, "bus", 0xff);
    a.slot = Number(ctx, node, "slot", 0x1f);
    a.function = Number(ctx, node, "function", 7);
    a.multifunction = NodeAttr(node, "multifunction").value_or("off") == "on";
    if (a.domain && *a.domain != 0) ctx.Fail(node, "only PCI domain 0 is supported");
  } else if (a.type == "drive") {
    a.controller = Number(ctx, node, "controller", 1024);
    a.drive_bus = Number(ctx, node, "bus", 1024);
    a.target = Number(ctx, node, "target", 1024);
    a.unit = Number(ctx, node, "unit", 1024);
  } else if (a.type == "virtio-serial") {
    a.controller = Number(ctx, node, "controller", 1024);
    a.drive_bus = Number(ctx, node, "bus", 1024);
    a.port = Number(ctx, node, "port", 1024);
  } else if (a.type == "usb") {
    a.drive_bus = Number(ctx, node, "bus", 1024);
    a.usb_port = NodeAttr(node, "port").value_or("");
  } else if (a.type != "isa") {
    ctx.Unsupported(node, "address type '" + a.type + "' not supported by qlaunch, ignored");
    return DeviceAddress{};
  }
  return a;
}

DeviceAddress ParsePciAddress(ParseContext& ctx, const xmlNode* device, std::string_view what) {
  DeviceAddress a = ParseAddress(ctx, device);
  if (!a.type.empty() && a.type != "pci")
    ctx.Fail(device, std::string(what) + " needs a PCI address, not '" + a.type + "' (expected pci)");
  return a;
}

std::optional<unsigned> ParseBootOrder(ParseContext& ctx, const xmlNode* device) {
  const xmlNode* boot = UniqueChild(ctx, device, "boot");
  if (!boot) return std::nullopt;
  std::string text = RequiredAttr(ctx, boot, "order");
  std::optional<uint64_t> v = text.starts_with("0x") ? std::nullopt : ParseNumber(text);
  if (!v || *v == 0 || *v > 0xffff) ctx.Fail(boot, "invalid boot order '" + text + "' (a number from 1)");
  return static_cast<unsigned>(*v);
}

}  // namespace qlaunch::domain
