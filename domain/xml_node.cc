#include "domain/xml_node.h"

#include <memory>

namespace qlaunch::domain {

namespace {

std::string_view Chars(const xmlChar* s) { return s ? reinterpret_cast<const char*>(s) : ""; }

struct XmlFree {
  void operator()(xmlChar* p) const { xmlFree(p); }
};
using XmlString = std::unique_ptr<xmlChar, XmlFree>;

std::string QualifiedName(const xmlNs* ns, const xmlChar* name) {
  std::string out;
  if (ns && ns->prefix) {
    out = Chars(ns->prefix);
    out += ':';
  }
  out += Chars(name);
  return out;
}

}  // namespace

std::string NodeName(const xmlNode* node) { return QualifiedName(node->ns, node->name); }

int NodeLine(const xmlNode* node) {
  long line = xmlGetLineNo(node);
  return line > 0 ? static_cast<int>(line) : 0;
}

std::optional<std::string> NodeAttr(const xmlNode* node, std::string_view name) {
  std::string key(name);
  XmlString value(xmlGetNoNsProp(node, reinterpret_cast<const xmlChar*>(key.c_str())));
  if (!value) return std::nullopt;
  return std::string(Chars(value.get()));
}

std::string NodeText(const xmlNode* node) {
  XmlString text(xmlNodeGetContent(node));
  return std::string(Chars(text.get()));
}

std::vector<const xmlNode*> ElementChildren(const xmlNode* node) {
  std::vector<const xmlNode*> out;
  for (const xmlNode* child = node->children; child; child = child->next)
    if (child->type == XML_ELEMENT_NODE) out.push_back(child);
  return out;
}

std::vector<const xmlNode*> ElementChildren(const xmlNode* node, std::string_view name) {
  std::vector<const xmlNode*> out;
  for (const xmlNode* child : ElementChildren(node))
    if (NodeName(child) == name) out.push_back(child);
  return out;
}

std::vector<std::string> AttributeNames(const xmlNode* node) {
  std::vector<std::string> out;
  for (const xmlAttr* attr = node->properties; attr; attr = attr->next)
    out.push_back(QualifiedName(attr->ns, attr->name));
  return out;
}

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

}  // namespace qlaunch::domain
