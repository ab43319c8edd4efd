// <os>: guest type/arch/machine, direct kernel boot, boot order, the firmware (firmware=,
// <loader>, <nvram>, <firmware><feature>) and <bootmenu>. <smbios> is read by parse_machine.cc.
#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

constexpr EnumName<std::string_view> kBootDevices[] = {
    {"hd", "hd"}, {"cdrom", "cdrom"}, {"network", "network"}, {"fd", "fd"}};

// firmware=, <loader>, <nvram>, <firmware><feature>.
Firmware ParseFirmware(ParseContext& ctx, const xmlNode* node) {
  Firmware fw;
  fw.line = NodeLine(node);
  if (auto kind = NodeAttr(node, "firmware")) {
    if (*kind != "efi" && *kind != "bios") FailInvalidValue(ctx, node, "firmware", *kind, "expected efi|bios");
    fw.firmware = *kind;
  }
  if (const xmlNode* loader = UniqueChild(ctx, node, "loader")) {
    fw.loader_line = NodeLine(loader);
    fw.loader = std::string(TrimSpace(NodeText(loader)));
    fw.loader_readonly = YesNoAttr(ctx, loader, "readonly");
    fw.loader_secure = YesNoAttr(ctx, loader, "secure");
    if (auto type = NodeAttr(loader, "type")) {
      if (*type != "rom" && *type != "pflash") FailInvalidValue(ctx, loader, "type", *type, "expected rom|pflash");
      fw.loader_type = *type;
    }
    if (fw.loader.empty() && fw.firmware != "efi")
      ctx.Fail(loader, "a <loader> without a path needs <os firmware='efi'>");
  }
  if (const xmlNode* nvram = UniqueChild(ctx, node, "nvram")) {
    fw.nvram_line = NodeLine(nvram);
    fw.nvram = std::string(TrimSpace(NodeText(nvram)));
    fw.nvram_template = NodeAttr(nvram, "template").value_or("");
  }
  if (const xmlNode* firmware = UniqueChild(ctx, node, "firmware")) {
    for (const xmlNode* feature : ElementChildren(firmware, "feature")) {
      std::string name = RequiredAttr(ctx, feature, "name");
      std::optional<bool> enabled = YesNoAttr(ctx, feature, "enabled");
      if (!enabled) ctx.Fail(feature, "missing 'enabled' attribute of firmware feature '" + name + "'");
      if (name == "secure-boot") fw.secure_boot = enabled;
      else if (name == "enrolled-keys") fw.enrolled_keys = enabled;
      else FailInvalidValue(ctx, feature, "name", name, "expected secure-boot|enrolled-keys");
    }
  }
  if (fw.loader_secure.value_or(false) && fw.loader_type == "rom")
    ctx.Fail(node, "secure boot needs a pflash <loader>");
  return fw;
}

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
  os.firmware = ParseFirmware(ctx, node);
  if (const xmlNode* menu = UniqueChild(ctx, node, "bootmenu")) os.bootmenu = YesNoAttr(ctx, menu, "enable");
  return os;
}

}  // namespace qlaunch::domain
