// <memoryBacking>: hugepages (per guest-node page sizes), source, access, allocation, flags.
#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

constexpr EnumName<MemSource> kSourceNames[] = {
    {"anonymous", MemSource::kAnonymous}, {"file", MemSource::kFile}, {"memfd", MemSource::kMemfd}};
constexpr EnumName<AllocMode> kAllocNames[] = {{"immediate", AllocMode::kImmediate},
                                               {"ondemand", AllocMode::kOnDemand}};

HugePage ParsePage(ParseContext& ctx, const xmlNode* node) {
  HugePage page;
  page.line = NodeLine(node);
  page.size_bytes = SizeAttr(ctx, node, "size");
  if (page.size_bytes == 0) ctx.Fail(node, "hugepage size can't be zero");
  page.guest_nodes = IdSetAttr(ctx, node, "nodeset");
  return page;
}

// libvirt's wording: "unknown memoryBacking/source/type 'foo'".
template <typename E, size_t N>
E ModeAttr(ParseContext& ctx, const xmlNode* node, std::string_view attr, const EnumName<E> (&table)[N],
           E fallback) {
  std::optional<std::string> text = NodeAttr(node, attr);
  if (!text) return fallback;
  if (auto value = EnumValue(*text, table)) return *value;
  ctx.Fail(node, "unknown memoryBacking/" + NodeName(node) + "/" + std::string(attr) + " '" + *text +
                     "' (expected " + EnumChoices(table) + ")");
}

}  // namespace

MemoryBacking ParseMemoryBacking(ParseContext& ctx, const xmlNode* node) {
  MemoryBacking mb;
  mb.present = true;
  mb.line = NodeLine(node);
  if (const xmlNode* hugepages = UniqueChild(ctx, node, "hugepages")) {
    mb.hugepages = true;
    mb.hugepages_line = NodeLine(hugepages);
    for (const xmlNode* page : ElementChildren(hugepages, "page")) mb.pages.push_back(ParsePage(ctx, page));
  }
  mb.nosharepages = UniqueChild(ctx, node, "nosharepages") != nullptr;
  mb.locked = UniqueChild(ctx, node, "locked") != nullptr;
  mb.discard = UniqueChild(ctx, node, "discard") != nullptr;
  if (const xmlNode* source = UniqueChild(ctx, node, "source")) {
    mb.source_line = NodeLine(source);
    mb.source = ModeAttr(ctx, source, "type", kSourceNames, MemSource::kDefault);
  }
  if (const xmlNode* access = UniqueChild(ctx, node, "access"))
    mb.access = ModeAttr(ctx, access, "mode", kMemAccessNames, MemAccess::kDefault);
  if (const xmlNode* allocation = UniqueChild(ctx, node, "allocation")) {
    mb.allocation_line = NodeLine(allocation);
    mb.allocation = ModeAttr(ctx, allocation, "mode", kAllocNames, AllocMode::kDefault);
    mb.threads = UIntAttr(ctx, allocation, "threads");
  }
  return mb;
}

}  // namespace qlaunch::domain
