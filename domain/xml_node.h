// Read-only helpers over libxml2 element nodes: names, lines, attributes, text, children.
// Internal to domain/; the parser never touches libxml2 structures directly elsewhere.
#pragma once

#include <libxml/tree.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qlaunch::domain {

// "cell", or "qemu:commandline" for an element in a prefixed namespace.
std::string NodeName(const xmlNode* node);

// 1-based line of the element's start tag (0 when unknown).
int NodeLine(const xmlNode* node);

// Value of an attribute without namespace; std::nullopt when absent.
std::optional<std::string> NodeAttr(const xmlNode* node, std::string_view name);

// All text inside the element (concatenated), as written.
std::string NodeText(const xmlNode* node);

// Element children in document order (text, comments and PIs skipped).
std::vector<const xmlNode*> ElementChildren(const xmlNode* node);

// Element children named `name`, in document order.
std::vector<const xmlNode*> ElementChildren(const xmlNode* node, std::string_view name);

// Names of all attributes of the element ("prefix:name" for namespaced ones).
std::vector<std::string> AttributeNames(const xmlNode* node);

std::string_view TrimSpace(std::string_view s);

}  // namespace qlaunch::domain
