// <numatune>: domain-wide <memory> policy and per-cell <memnode> policies (host nodesets).
#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

MemNode ParseMemNode(ParseContext& ctx, const xmlNode* node) {
  MemNode memnode;
  memnode.line = NodeLine(node);
  if (!NodeAttr(node, "cellid")) ctx.Fail(node, "Missing required cellid attribute in memnode element");
  memnode.cellid = *UIntAttr(ctx, node, "cellid");
  memnode.mode = EnumAttr(ctx, node, "mode", kNumaModeNames).value_or(NumaMode::kStrict);
  if (!NodeAttr(node, "nodeset")) ctx.Fail(node, "Missing required nodeset attribute in memnode element");
  memnode.nodeset = *IdSetAttr(ctx, node, "nodeset");
  return memnode;
}

}  // namespace

NumaTune ParseNumaTune(ParseContext& ctx, const xmlNode* node) {
  NumaTune tune;
  tune.present = true;
  tune.line = NodeLine(node);
  if (const xmlNode* memory = UniqueChild(ctx, node, "memory")) {
    tune.memory_line = NodeLine(memory);
    tune.mode = EnumAttr(ctx, memory, "mode", kNumaModeNames).value_or(NumaMode::kStrict);
    tune.nodeset = IdSetAttr(ctx, memory, "nodeset");
    tune.placement = EnumAttr(ctx, memory, "placement", kPlacementNames).value_or(Placement::kDefault);
  }
  for (const xmlNode* memnode : ElementChildren(node, "memnode")) tune.memnodes.push_back(ParseMemNode(ctx, memnode));
  return tune;
}

}  // namespace qlaunch::domain
