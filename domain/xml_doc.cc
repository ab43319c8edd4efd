#include "domain/xml_doc.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "common/diagnostic.h"
#include "domain/xml_node.h"

namespace qlaunch::domain {

namespace {

constexpr int kParseOptions = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;

// What the C callbacks saw. They only record (never throw): exceptions must not cross libxml2.
struct ParseRecord {
  std::vector<std::pair<int, std::string>> errors;  // line, message
  bool entity_declared = false;
  int entity_line = 0;
  std::string entity_name;
};

ParseRecord* RecordOf(void* ctx) {
  auto* parser = static_cast<xmlParserCtxtPtr>(ctx);
  return parser ? static_cast<ParseRecord*>(parser->_private) : nullptr;
}

void OnStructuredError(void* ctx, xmlErrorPtr error) noexcept {
  ParseRecord* record = RecordOf(ctx);
  if (!record || !error || error->level < XML_ERR_ERROR) return;
  try {
    std::string message = error->message ? error->message : "unknown XML error";
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    std::replace(message.begin(), message.end(), '\n', ' ');  // one diagnostic, one line
    record->errors.emplace_back(error->line, std::move(message));
  } catch (...) {
    // Out of memory while recording: the parse fails anyway (wellFormed is 0).
  }
}

void RefuseEntity(void* ctx, const xmlChar* name) noexcept {
  ParseRecord* record = RecordOf(ctx);
  if (record && !record->entity_declared) {
    record->entity_declared = true;
    record->entity_line = xmlSAX2GetLineNumber(ctx);
    try {
      record->entity_name = name ? reinterpret_cast<const char*>(name) : "";
    } catch (...) {
    }
  }
  xmlStopParser(static_cast<xmlParserCtxtPtr>(ctx));
}

void OnEntityDecl(void* ctx, const xmlChar* name, int, const xmlChar*, const xmlChar*, xmlChar*) noexcept {
  RefuseEntity(ctx, name);
}

void OnUnparsedEntityDecl(void* ctx, const xmlChar* name, const xmlChar*, const xmlChar*,
                          const xmlChar*) noexcept {
  RefuseEntity(ctx, name);
}

[[noreturn]] void Fail(const std::string& file, int line, std::string message) {
  throw DiagnosticError(Diagnostic{Severity::kError, file, line, "", std::move(message)});
}

int LineAt(std::string_view bytes, size_t offset) {
  return 1 + static_cast<int>(std::count(bytes.begin(), bytes.begin() + offset, '\n'));
}

void CheckRawBytes(std::string_view bytes, const std::string& file) {
  if (TrimSpace(bytes).empty()) Fail(file, 0, "file is empty; expected a libvirt <domain> XML document");
  size_t nul = bytes.find('\0');
  if (nul != std::string_view::npos)
    Fail(file, LineAt(bytes, nul),
         "file contains binary data (NUL byte at offset " + std::to_string(nul) + "); expected XML text");
  if (bytes.size() > static_cast<size_t>(INT_MAX)) Fail(file, 0, "file is too large for the XML parser");
}

struct ParserCtxtDeleter {
  void operator()(xmlParserCtxt* ctxt) const { xmlFreeParserCtxt(ctxt); }
};

}  // namespace

XmlDoc XmlDoc::Parse(std::string_view bytes, const std::string& file) {
  CheckRawBytes(bytes, file);

  std::unique_ptr<xmlParserCtxt, ParserCtxtDeleter> parser(xmlNewParserCtxt());
  if (!parser) Fail(file, 0, "cannot allocate the XML parser");
  ParseRecord record;
  parser->_private = &record;
  parser->sax->serror = &OnStructuredError;
  parser->sax->entityDecl = &OnEntityDecl;
  parser->sax->unparsedEntityDecl = &OnUnparsedEntityDecl;

  XmlDoc doc(xmlCtxtReadMemory(parser.get(), bytes.data(), static_cast<int>(bytes.size()), file.c_str(),
                               nullptr, kParseOptions));

  if (record.entity_declared)
    Fail(file, record.entity_line,
         "DOCTYPE declares entity '" + record.entity_name +
             "': entity declarations are not allowed in domain XML (they are never expanded)");
  if (!record.errors.empty()) {
    std::vector<Diagnostic> diags;
    for (auto& [line, message] : record.errors)
      diags.push_back(Diagnostic{Severity::kError, file, line, "", "malformed XML: " + message});
    throw DiagnosticError(std::move(diags));
  }
  if (!doc.doc_ || !parser->wellFormed) Fail(file, 0, "malformed XML");
  if (!doc.Root()) Fail(file, 0, "XML document has no root element");
  return doc;
}

}  // namespace qlaunch::domain
