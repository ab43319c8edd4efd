// Small edits of a libxml2 tree that the running definition's writers share (the live XML,
// the media record): find a child element, add one where it belongs, set an attribute, and
// write the tree out indented as libvirt writes it.
#pragma once

#include <libxml/tree.h>

#include <string>

namespace qlaunch::launcher::xml_edit {

inline const xmlChar* X(const char* s) { return reinterpret_cast<const xmlChar*>(s); }
inline const xmlChar* X(const std::string& s) { return X(s.c_str()); }

// The first child element called `name` (null parent: none).
xmlNode* Child(xmlNode* parent, const char* name);
void SetAttr(xmlNode* node, const char* name, const std::string& value);
// A new child element: before `before` when given, else last.
xmlNode* AddChild(xmlNode* parent, const char* name, xmlNode* before = nullptr);
// The root element, whitespace between elements dropped so that the writer indents what was
// added like the rest, and a final newline.
std::string WriteIndented(xmlDoc* doc);

}  // namespace qlaunch::launcher::xml_edit
