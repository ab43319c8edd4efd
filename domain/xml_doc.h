// XmlDoc: an owned libxml2 document parsed safely from a buffer.
//
// Safety: XML_PARSE_NONET; never NOENT, DTDLOAD, DTDATTR or HUGE (libxml2's default depth and
// expansion limits stay on); any <!ENTITY> declaration stops the parse and is refused, so neither
// external entities (XXE) nor entity expansion bombs get anywhere. Errors are captured through a
// structured handler on the parser context (nothing is printed) and thrown as DiagnosticError
// with the file and libxml2's line.
#pragma once

#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>

namespace qlaunch::domain {

class XmlDoc {
 public:
  // Throws DiagnosticError: empty input, binary data (NUL bytes), DTD entity declarations,
  // malformed XML (libxml2's message and line), a document without a root element.
  static XmlDoc Parse(std::string_view bytes, const std::string& file);

  const xmlNode* Root() const { return xmlDocGetRootElement(doc_.get()); }
  // For code that edits the parsed document (launcher/lifecycle/change/live_xml.cc) and writes it out.
  xmlDoc* MutableDoc() { return doc_.get(); }

 private:
  struct Deleter {
    void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
  };
  explicit XmlDoc(xmlDoc* doc) : doc_(doc) {}

  std::unique_ptr<xmlDoc, Deleter> doc_;
};

}  // namespace qlaunch::domain
