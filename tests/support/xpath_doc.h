// A domain XML read with XPath (libxml2, no network): the string value of an expression and the
// nodes it selects, at the document or at a node.
#pragma once

#include <libxml/parser.h>
#include <libxml/xpath.h>

#include <memory>
#include <string>
#include <vector>

namespace qlaunch::testing {

class XPathDoc {
 public:
  explicit XPathDoc(const std::string& xml)
      : doc_(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "live.xml", nullptr, XML_PARSE_NONET),
             xmlFreeDoc) {}
  bool ok() const { return doc_ != nullptr; }
  // The string value of `expr` at `node` (the document when null).
  std::string Str(const std::string& expr, xmlNodePtr node = nullptr) const {
    Ctx ctx(xmlXPathNewContext(doc_.get()), xmlXPathFreeContext);
    if (node) ctx->node = node;
    Obj obj(xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(("string(" + expr + ")").c_str()), ctx.get()),
            xmlXPathFreeObject);
    return obj && obj->stringval ? reinterpret_cast<const char*>(obj->stringval) : "";
  }
  std::vector<xmlNodePtr> Nodes(const std::string& expr) const {
    Ctx ctx(xmlXPathNewContext(doc_.get()), xmlXPathFreeContext);
    Obj obj(xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(expr.c_str()), ctx.get()), xmlXPathFreeObject);
    std::vector<xmlNodePtr> out;
    if (obj && obj->nodesetval)
      for (int i = 0; i < obj->nodesetval->nodeNr; ++i) out.push_back(obj->nodesetval->nodeTab[i]);
    return out;
  }

 private:
  using Ctx = std::unique_ptr<xmlXPathContext, void (*)(xmlXPathContextPtr)>;
  using Obj = std::unique_ptr<xmlXPathObject, void (*)(xmlXPathObjectPtr)>;
  std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)> doc_;
};

}  // namespace qlaunch::testing
