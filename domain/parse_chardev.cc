// <serial>, <console>, <channel>: the character devices and their host side.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

std::optional<CharDev> ParseCharDev(ParseContext& ctx, const xmlNode* node) {
  CharDev chr;
  chr.line = NodeLine(node);
  chr.kind = NodeName(node);
  if (chr.kind == "channel") return std::nullopt;  // not yet: the chardev family adds channels
  chr.type = NodeAttr(node, "type").value_or("pty");
  if (Classify(ctx, node, chr.kind + " type", chr.type, {"pty", "file", "null", "stdio", "unix"},
               {"vc", "dev", "pipe", "tcp", "udp", "spicevmc", "spiceport", "nmdm", "qemu-vdagent", "dbus"}) ==
      Support::kNo)
    return std::nullopt;
  if (const xmlNode* source = UniqueChild(ctx, node, "source")) chr.path = NodeAttr(source, "path").value_or("");
  if ((chr.type == "file" || chr.type == "unix") && chr.path.empty())
    ctx.Fail(node, "Missing source path attribute for char device");
  if (const xmlNode* target = UniqueChild(ctx, node, "target")) chr.target_type = NodeAttr(target, "type").value_or("");
  return chr;
}

std::span<const UnderstoodElement> UnderstoodCharDevElements() {
  static constexpr UnderstoodElement kElements[] = {
    {"domain/devices/serial", "type"},
    {"domain/devices/serial/source", "path"},
    {"domain/devices/serial/target", "type"},
    {"domain/devices/console", "type"},
    {"domain/devices/console/source", "path"},
    {"domain/devices/console/target", "type"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
