#include "launcher/lifecycle/change/xml_edit.h"

#include "domain/xml_node.h"

namespace qlaunch::launcher::xml_edit {

namespace {

void DropBlankText(xmlNode* node) {
  bool has_element = false;
  for (xmlNode* c = node->children; c; c = c->next) has_element |= c->type == XML_ELEMENT_NODE;
  for (xmlNode* c = node->children; c;) {
    xmlNode* next = c->next;
    if (c->type == XML_TEXT_NODE && has_element && xmlIsBlankNode(c)) {
      xmlUnlinkNode(c);
      xmlFreeNode(c);
    } else if (c->type == XML_ELEMENT_NODE) {
      DropBlankText(c);
    }
    c = next;
  }
}

}  // namespace

xmlNode* Child(xmlNode* parent, const char* name) {
  for (xmlNode* c = parent ? parent->children : nullptr; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && domain::NodeName(c) == name) return c;
  return nullptr;
}

void SetAttr(xmlNode* node, const char* name, const std::string& value) { xmlSetProp(node, X(name), X(value)); }

xmlNode* AddChild(xmlNode* parent, const char* name, xmlNode* before) {
  xmlNode* n = xmlNewDocNode(parent->doc, nullptr, X(name), nullptr);
  return before ? xmlAddPrevSibling(before, n) : xmlAddChild(parent, n);
}

std::string WriteIndented(xmlDoc* doc) {
  DropBlankText(xmlDocGetRootElement(doc));
  xmlBuffer* buf = xmlBufferCreate();
  xmlNodeDump(buf, doc, xmlDocGetRootElement(doc), 0, 1);
  std::string out(reinterpret_cast<const char*>(xmlBufferContent(buf)), xmlBufferLength(buf));
  xmlBufferFree(buf);
  return out + "\n";
}

}  // namespace qlaunch::launcher::xml_edit
