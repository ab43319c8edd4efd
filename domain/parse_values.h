// Typed readers for attribute values and element text. Absent optional values are std::nullopt;
// present but invalid values throw through ParseContext::Fail with the element's line.
#pragma once

#include <libxml/tree.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/id_set.h"
#include "domain/parse_context.h"
#include "domain/xml_node.h"

namespace qlaunch::domain {

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

std::string RequiredAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);

std::optional<unsigned> UIntAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);
unsigned RequiredUIntAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);
// Like UIntAttr, but 0 is refused ("Zero is not permitted").
std::optional<unsigned> NonZeroUIntAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);
// Element text as an unsigned integer.
unsigned UIntText(const ParseContext& ctx, const xmlNode* node);
// Hexadecimal with optional 0x prefix (libvirt's base-16 address attributes).
std::optional<uint64_t> HexAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);

// Size in bytes from `value_attr` (or the element text when value_attr is empty) and the
// 'unit' attribute (default KiB). Required: absent values throw.
uint64_t SizeAttr(const ParseContext& ctx, const xmlNode* node, std::string_view value_attr);
uint64_t SizeText(const ParseContext& ctx, const xmlNode* node);

// libvirt list syntax "0-3,^2,8". An empty result (e.g. "0,^0") is refused with libvirt's
// "Invalid value of '<name>': <text>".
std::optional<IdSet> IdSetAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);
IdSet IdSetText(const ParseContext& ctx, const xmlNode* node, std::string_view what);

std::optional<bool> YesNoAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);
// on | off (libvirt's virTristateSwitch); nullopt when absent.
std::optional<bool> OnOffAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name);

[[noreturn]] void FailInvalidValue(const ParseContext& ctx, const xmlNode* node, std::string_view name,
                                   std::string_view value, std::string_view expected);

template <typename E, size_t N>
std::optional<E> EnumValue(std::string_view text, const EnumName<E> (&table)[N]) {
  for (const auto& entry : table)
    if (entry.name == text) return entry.value;
  return std::nullopt;
}

template <typename E, size_t N>
std::string EnumChoices(const EnumName<E> (&table)[N]) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += '|';
    out += entry.name;
  }
  return out;
}

template <typename E, size_t N>
std::optional<E> EnumAttr(const ParseContext& ctx, const xmlNode* node, std::string_view name,
                          const EnumName<E> (&table)[N]) {
  std::optional<std::string> text = NodeAttr(node, name);
  if (!text) return std::nullopt;
  if (auto value = EnumValue(*text, table)) return value;
  FailInvalidValue(ctx, node, name, *text, "expected " + EnumChoices(table));
}

}  // namespace qlaunch::domain
