// <memballoon>, <rng>, <watchdog>.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

std::optional<MemBalloon> ParseMemBalloon(ParseContext& ctx, const xmlNode* node) {
  MemBalloon balloon;
  balloon.line = NodeLine(node);
  balloon.model = RequiredAttr(ctx, node, "model");
  if (Classify(ctx, node, "memballoon model", balloon.model, {"virtio", "none"},
               {"virtio-transitional", "virtio-non-transitional", "xen"}) == Support::kNo)
    return std::nullopt;
  return balloon;
}

std::optional<Rng> ParseRng(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }
std::optional<Watchdog> ParseWatchdog(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }

std::span<const UnderstoodElement> UnderstoodMiscDeviceElements() {
  static constexpr UnderstoodElement kElements[] = {
    {"domain/devices/memballoon", "model"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
