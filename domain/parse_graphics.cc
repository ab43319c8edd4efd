// <graphics>, <video>, <input>, <sound>, <redirdev>: what a user sees, hears and types with.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

std::optional<Graphics> ParseGraphics(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }
std::optional<Video> ParseVideo(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }
std::optional<Input> ParseInput(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }
std::optional<Sound> ParseSound(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }
std::optional<RedirDev> ParseRedirDev(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }

std::span<const UnderstoodElement> UnderstoodGraphicsElements() { return {}; }

}  // namespace qlaunch::domain
