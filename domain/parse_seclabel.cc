// <seclabel>: the DAC label QEMU runs under (libvirt's "dac" security model).
#include "domain/parse_sections.h"

namespace qlaunch::domain {

SecLabel ParseSecLabels(ParseContext& ctx, const xmlNode* domain) {
  SecLabel out;
  for (const xmlNode* node : ElementChildren(domain, "seclabel")) {
    std::string model = NodeAttr(node, "model").value_or("");
    if (model != "dac") {
      ctx.Unsupported(node, "security model '" + (model.empty() ? std::string("(host default)") : model) +
                                "' not supported by qlaunch (only model='dac'; AppArmor/SELinux profiles are the host's)");
      continue;
    }
    if (out.present) ctx.Fail(node, "more than one <seclabel model='dac'>");
    out.present = true;
    out.line = NodeLine(node);
    out.type = NodeAttr(node, "type").value_or("static");
    if (out.type != "static" && out.type != "dynamic" && out.type != "none")
      ctx.Fail(node, "unknown seclabel type '" + out.type + "' (expected static, dynamic or none)");
    if (auto relabel = NodeAttr(node, "relabel")) {
      if (*relabel != "yes" && *relabel != "no") ctx.Fail(node, "relabel must be 'yes' or 'no', not '" + *relabel + "'");
      out.relabel = *relabel == "yes";
    }
    if (const xmlNode* label = UniqueChild(ctx, node, "label")) out.label = std::string(TrimSpace(NodeText(label)));
    if (out.type == "static" && out.label.empty())
      ctx.Fail(node, "<seclabel type='static' model='dac'> needs a <label>USER:GROUP</label>");
  }
  return out;
}

}  // namespace qlaunch::domain
