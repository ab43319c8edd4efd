// <interface>: user, ethernet and bridge networking, MAC, model, link state, boot order.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

std::optional<Interface> ParseInterface(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }

std::span<const UnderstoodElement> UnderstoodNetElements() { return {}; }

}  // namespace qlaunch::domain
