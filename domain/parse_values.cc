#include "domain/parse_values.h"

#include <limits>

#include "domain/units.h"

namespace qlaunch::domain {

namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::optional<unsigned> ToUInt(std::string_view text) {
  std::optional<uint64_t> value = ParseDecimal(text);
  if (!value || *value > std::numeric_limits<unsigned>::max()) return std::nullopt;
  return static_cast<unsigned>(*value);
}

std::string SizeErrorText(SizeError error) {
  switch (error) {
    case SizeError::kBadNumber: return "expected a non-negative integer";
    case SizeError::kUnknownUnit: return "unknown unit";
    case SizeError::kTooLarge: return "size value too large";
    case SizeError::kNone: break;
  }
  return "";
}

uint64_t Size(const ParseContext& ctx, const xmlNode* node, std::string_view what, std::string_view number) {
  std::string unit = NodeAttr(node, "unit").value_or("");
  SizeResult result = ParseMemorySizeDetailed(number, unit);
  if (result.error == SizeError::kUnknownUnit)
    ctx.Fail(node, "unknown suffix '" + unit + "' in unit attribute (expected b, bytes, KB, k, KiB, MB, M, MiB, GB, G, GiB, TB, T, TiB)");
  if (result.error != SizeError::kNone)
    ctx.Fail(node, "Invalid value " + Quote(number) + " for " + std::string(what) + ": " +
                       SizeErrorText(result.error));
  return result.bytes;
}

}  // namespace

void FailInvalidValue(const ParseContext& ctx, const xmlNode* node, std::string_view name,
                      std::string_view value, std::string_view expected) {
  std::string message = "Invalid value for attribute " + Quote(name) + " in element " + Quote(NodeName(node)) +
                        ": " + Quote(value) + ".";
  if (!expected.empty()) message += " " + std::string(expected);
  ctx.Fail(node, std::move(message));
}

std::string RequiredAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  std::optional<std::string> value = NodeAttr(node, name);
  if (!value)
    ctx.Fail(node, "Missing required attribute " + Quote(name) + " in element " + Quote(NodeName(node)));
  return *value;
}

std::optional<unsigned> UIntAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  std::optional<std::string> text = NodeAttr(node, name);
  if (!text) return std::nullopt;
  std::optional<unsigned> value = ToUInt(*text);
  if (!value) FailInvalidValue(ctx, node, name, *text, "Expected non-negative integer value");
  return value;
}

unsigned RequiredUIntAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  RequiredAttr(ctx, node, name);
  return *UIntAttr(ctx, node, name);
}

std::optional<unsigned> NonZeroUIntAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  std::optional<unsigned> value = UIntAttr(ctx, node, name);
  if (value && *value == 0)
    ctx.Fail(node, "Invalid value for attribute " + Quote(name) + " in element " + Quote(NodeName(node)) +
                       ": Zero is not permitted");
  return value;
}

unsigned UIntText(const ParseContext& ctx, const xmlNode* node) {
  std::string text = NodeText(node);
  std::optional<unsigned> value = ToUInt(text);
  if (!value)
    ctx.Fail(node, "Invalid value " + Quote(TrimSpace(text)) + " for element <" + NodeName(node) +
                       ">: expected a non-negative integer");
  return *value;
}

std::optional<uint64_t> HexAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  std::optional<std::string> text = NodeAttr(node, name);
  if (!text) return std::nullopt;
  std::string_view digits = TrimSpace(*text);
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
  bool ok = !digits.empty() && digits.size() <= 16;
  uint64_t value = 0;
  for (char c : digits) {
    int nibble = (c >= '0' && c <= '9') ? c - '0'
                 : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                 : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                          : -1;
    if (nibble < 0) ok = false;
    value = value << 4 | static_cast<uint64_t>(nibble & 0xf);
  }
  if (!ok) FailInvalidValue(ctx, node, name, *text, "Expected a hexadecimal value such as 0x100000000");
  return value;
}

uint64_t SizeAttr(const ParseContext& ctx, const xmlNode* node, std::string_view value_attr) {
  std::string number = RequiredAttr(ctx, node, value_attr);
  return Size(ctx, node, "attribute '" + std::string(value_attr) + "'", number);
}

uint64_t SizeText(const ParseContext& ctx, const xmlNode* node) {
  return Size(ctx, node, "element <" + NodeName(node) + ">", NodeText(node));
}

namespace {

IdSet ParseIdList(const ParseContext& ctx, const xmlNode* node, std::string_view name, const std::string& text) {
  std::optional<IdSet> set = IdSet::Parse(text);
  if (!set)
    ctx.Fail(node, "Invalid value of " + Quote(name) + ": " + Quote(text) +
                       " (expected a list such as 0-3,^2,8)");
  if (set->Empty()) ctx.Fail(node, "Invalid value of " + Quote(name) + ": " + std::string(TrimSpace(text)));
  return *set;
}

}  // namespace

std::optional<IdSet> IdSetAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  std::optional<std::string> text = NodeAttr(node, name);
  if (!text) return std::nullopt;
  return ParseIdList(ctx, node, name, *text);
}

IdSet IdSetText(const ParseContext& ctx, const xmlNode* node, std::string_view what) {
  return ParseIdList(ctx, node, what, NodeText(node));
}

std::optional<bool> YesNoAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  static constexpr EnumName<bool> kYesNo[] = {{"yes", true}, {"no", false}};
  return EnumAttr(ctx, node, name, kYesNo);
}

std::optional<bool> OnOffAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name) {
  std::optional<std::string> v = NodeAttr(node, name);
  if (!v) return std::nullopt;
  if (*v == "on") return true;
  if (*v == "off") return false;
  FailInvalidValue(ctx, node, name, *v, "expected on|off");
}

}  // namespace qlaunch::domain
