// <devices><memory model='dimm'|'nvdimm'|'virtio-mem'>: hot-pluggable guest memory with its own
// backing. A DIMM sits in a memory slot (<address type='dimm'>), virtio-mem on PCI.
#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

void ParseSource(ParseContext& ctx, const xmlNode* source, MemoryDevice& mem) {
  if (const xmlNode* pagesize = UniqueChild(ctx, source, "pagesize"))
    mem.source_pagesize_bytes = SizeText(ctx, pagesize);
  if (const xmlNode* nodemask = UniqueChild(ctx, source, "nodemask"))
    mem.source_nodemask = IdSetText(ctx, nodemask, "nodemask");
  if (const xmlNode* path = UniqueChild(ctx, source, "path")) mem.source_path = NodeText(path);
}

void ParseTarget(ParseContext& ctx, const xmlNode* target, MemoryDevice& mem) {
  const xmlNode* size = UniqueChild(ctx, target, "size");
  if (!size) ctx.Fail(target, "missing <size> in memory device <target>");
  mem.size_bytes = SizeText(ctx, size);
  if (const xmlNode* node = UniqueChild(ctx, target, "node")) mem.node = UIntText(ctx, node);
  if (mem.model != "virtio-mem") return;
  if (const xmlNode* block = UniqueChild(ctx, target, "block")) mem.block_bytes = SizeText(ctx, block);
  if (const xmlNode* requested = UniqueChild(ctx, target, "requested")) mem.requested_bytes = SizeText(ctx, requested);
}

void ParseDimmAddress(ParseContext& ctx, const xmlNode* address, MemoryDevice& mem) {
  std::string type = RequiredAttr(ctx, address, "type");
  if (type != "dimm") {
    ctx.Unsupported(address, "memory device address type '" + type + "' not supported by qlaunch (only dimm), ignored");
    return;
  }
  mem.slot = UIntAttr(ctx, address, "slot");
  mem.base = HexAttr(ctx, address, "base");
}

}  // namespace

std::optional<MemoryDevice> ParseMemoryDevice(ParseContext& ctx, const xmlNode* node) {
  MemoryDevice mem;
  mem.line = NodeLine(node);
  mem.model = RequiredAttr(ctx, node, "model");
  if (mem.model == "virtio-pmem" || mem.model == "sgx-epc") {
    ctx.Unsupported(node, "memory model '" + mem.model + "' not supported by qlaunch (supported: dimm|nvdimm|virtio-mem), element ignored");
    return std::nullopt;
  }
  if (mem.model != "dimm" && mem.model != "nvdimm" && mem.model != "virtio-mem")
    FailInvalidValue(ctx, node, "model", mem.model, "expected dimm|nvdimm|virtio-mem");
  mem.access = EnumAttr(ctx, node, "access", kMemAccessNames).value_or(MemAccess::kDefault);
  mem.discard = YesNoAttr(ctx, node, "discard");
  if (const xmlNode* source = UniqueChild(ctx, node, "source")) ParseSource(ctx, source, mem);
  const xmlNode* target = UniqueChild(ctx, node, "target");
  if (!target) ctx.Fail(node, "missing <target> in memory device");
  ParseTarget(ctx, target, mem);
  if (mem.model == "virtio-mem") {
    mem.pci_address = ParsePciAddress(ctx, node, "a virtio-mem device");
  } else if (const xmlNode* address = UniqueChild(ctx, node, "address")) {
    ParseDimmAddress(ctx, address, mem);
  }
  return mem;
}

}  // namespace qlaunch::domain
