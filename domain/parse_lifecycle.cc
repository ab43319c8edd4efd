// <on_poweroff>, <on_reboot>, <on_crash>: the domain's lifecycle actions.
#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

// libvirt's names, mapped to the three actions qlaunch has.
std::string Action(ParseContext& ctx, const xmlNode* node, bool crash) {
  std::string v = std::string(TrimSpace(NodeText(node)));
  if (v == "destroy" || v == "restart" || v == "preserve") return v;
  if (v == "rename-restart") return "restart";
  if (crash && (v == "coredump-destroy" || v == "coredump-restart")) {
    ctx.Unsupported(node, "'" + v + "': qlaunch takes no guest core dump; acting as " + v.substr(9));
    return v.substr(9);
  }
  ctx.Fail(node, "unknown action '" + v + "' (expected destroy, restart, preserve" +
                     (crash ? ", coredump-destroy or coredump-restart)" : " or rename-restart)"));
}

}  // namespace

Lifecycle ParseLifecycle(ParseContext& ctx, const xmlNode* domain) {
  Lifecycle l;
  if (const xmlNode* n = UniqueChild(ctx, domain, "on_poweroff")) {
    l.on_poweroff = Action(ctx, n, false);
    l.poweroff_line = NodeLine(n);
  }
  if (const xmlNode* n = UniqueChild(ctx, domain, "on_reboot")) {
    l.on_reboot = Action(ctx, n, false);
    l.reboot_line = NodeLine(n);
    if (l.on_reboot == "preserve") ctx.Fail(n, "on_reboot 'preserve' is not supported by libvirt's QEMU driver either");
  }
  if (const xmlNode* n = UniqueChild(ctx, domain, "on_crash")) {
    l.on_crash = Action(ctx, n, true);
    l.crash_line = NodeLine(n);
  }
  return l;
}

}  // namespace qlaunch::domain
