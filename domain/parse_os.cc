// <os>: guest type/arch/machine, direct kernel boot, boot order.
#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

constexpr EnumName<std::string_view> kBootDevices[] = {
    {"hd", "hd"}, {"cdrom", "cdrom"}, {"network", "network"}, {"fd", "fd"}};

}  // namespace

OsDef ParseOs(ParseContext& ctx, const xmlNode* node) {
  OsDef os;
  os.line = NodeLine(node);
  if (const xmlNode* type = UniqueChild(ctx, node, "type")) {
    os.type = std::string(TrimSpace(NodeText(type)));
    if (os.type != "hvm") ctx.Unsupported(type, "os type '" + os.type + "' not supported by qlaunch (only hvm)");
    os.arch = NodeAttr(type, "arch").value_or("");
    os.machine = NodeAttr(type, "machine").value_or("");
  }
  if (const xmlNode* kernel = UniqueChild(ctx, node, "kernel")) os.kernel = NodeText(kernel);
  if (const xmlNode* initrd = UniqueChild(ctx, node, "initrd")) os.initrd = NodeText(initrd);
  if (const xmlNode* cmdline = UniqueChild(ctx, node, "cmdline")) os.cmdline = NodeText(cmdline);
  for (const xmlNode* boot : ElementChildren(node, "boot")) {
    std::string dev = RequiredAttr(ctx, boot, "dev");
    if (!EnumValue(dev, kBootDevices))
      ctx.Fail(boot, "unknown boot device '" + dev + "' (expected " + EnumChoices(kBootDevices) + ")");
    os.boot.push_back(dev);
  }
  return os;
}

}  // namespace qlaunch::domain
