// XmlDoc: safe libxml2 configuration and error capture.
#include "domain/xml_doc.h"

#include <gtest/gtest.h>

#include <string>

#include "common/diagnostic.h"
#include "domain/parser.h"
#include "domain/xml_node.h"

namespace qlaunch::domain {
namespace {

Diagnostic FirstError(std::string_view bytes) {
  try {
    XmlDoc::Parse(bytes, "in.xml");
  } catch (const DiagnosticError& e) {
    EXPECT_FALSE(e.diagnostics().empty());
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "expected an error for: " << bytes;
  return {};
}

TEST(XmlDoc, ParsesAndKeepsLineNumbers) {
  XmlDoc doc = XmlDoc::Parse("<domain>\n\n  <name>x</name>\n</domain>", "in.xml");
  ASSERT_NE(doc.Root(), nullptr);
  EXPECT_EQ(NodeName(doc.Root()), "domain");
  auto children = ElementChildren(doc.Root());
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(NodeLine(children[0]), 3);
  EXPECT_EQ(NodeText(children[0]), "x");
}

TEST(XmlDoc, MalformedXmlCarriesLibxml2MessageAndLine) {
  Diagnostic d = FirstError("<domain>\n  <name>x</name>\n  <vcpu>2</cpu>\n</domain>");
  EXPECT_EQ(d.file, "in.xml");
  EXPECT_EQ(d.line, 3);
  EXPECT_NE(d.message.find("Opening and ending tag mismatch"), std::string::npos) << d.message;
}

TEST(XmlDoc, RefusesEmptyAndBinaryInput) {
  EXPECT_NE(FirstError("").message.find("empty"), std::string::npos);
  EXPECT_NE(FirstError(" \n\t\n").message.find("empty"), std::string::npos);
  Diagnostic nul = FirstError(std::string("<domain>\n\n\0\x01\x02</domain>", 22));
  EXPECT_NE(nul.message.find("binary data"), std::string::npos) << nul.message;
  EXPECT_EQ(nul.line, 3);
  Diagnostic utf8 = FirstError("<domain><name>\xff\xfe</name></domain>");
  EXPECT_NE(utf8.message.find("not proper UTF-8"), std::string::npos) << utf8.message;
  EXPECT_EQ(utf8.message.find('\n'), std::string::npos) << utf8.message;
  Diagnostic junk = FirstError("\x7f" "ELF\x02\x01\x01 garbage");
  EXPECT_NE(junk.message.find("malformed XML"), std::string::npos) << junk.message;
  EXPECT_EQ(junk.line, 1);
}

TEST(XmlDoc, ExternalEntityIsRefusedAndNeverRead) {
  const std::string xxe =
      "<?xml version='1.0'?>\n"
      "<!DOCTYPE domain [\n"
      "  <!ENTITY xxe SYSTEM 'file:///etc/shadow'>\n"
      "]>\n"
      "<domain type='kvm'><name>&xxe;</name><memory>1024</memory></domain>\n";
  Diagnostic d = FirstError(xxe);
  EXPECT_EQ(d.line, 3);
  EXPECT_NE(d.message.find("entity 'xxe'"), std::string::npos) << d.message;
  // Whatever happens, the entity never expands into the name: the parser refuses the document.
  try {
    DomainDef def = ParseDomainXml(xxe, "xxe.xml");
    FAIL() << "parsed, name='" << def.name << "'";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(std::string(e.what()).find("root:"), std::string::npos);
  }
}

TEST(XmlDoc, ParameterEntityIsRefused) {
  Diagnostic d = FirstError(
      "<!DOCTYPE domain [\n<!ENTITY % remote SYSTEM 'http://example.invalid/x.dtd'>\n%remote;\n]>\n<domain/>");
  EXPECT_NE(d.message.find("entity 'remote'"), std::string::npos) << d.message;
  EXPECT_EQ(d.line, 2);
}

TEST(XmlDoc, BillionLaughsFailsAtTheFirstDeclaration) {
  std::string doc = "<?xml version='1.0'?>\n<!DOCTYPE lolz [\n<!ENTITY lol 'lol'>\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = i == 1 ? "lol" : "lol" + std::to_string(i - 1);
    doc += "<!ENTITY lol" + std::to_string(i) + " '";
    for (int j = 0; j < 10; ++j) doc += "&" + prev + ";";
    doc += "'>\n";
  }
  doc += "]>\n<domain><name>&lol9;</name></domain>\n";
  Diagnostic d = FirstError(doc);
  EXPECT_EQ(d.line, 3);
  EXPECT_NE(d.message.find("entity declarations are not allowed"), std::string::npos) << d.message;
}

TEST(XmlDoc, DoctypeWithoutEntitiesAndExternalSubsetAreNotLoaded) {
  XmlDoc plain = XmlDoc::Parse("<!DOCTYPE domain>\n<domain><name>a</name></domain>", "in.xml");
  EXPECT_EQ(NodeText(ElementChildren(plain.Root())[0]), "a");
  // No DTDLOAD: the external subset is not fetched, so a missing or hostile path does not matter.
  XmlDoc external = XmlDoc::Parse(
      "<!DOCTYPE domain SYSTEM 'file:///etc/shadow'>\n<domain><name>b</name></domain>", "in.xml");
  EXPECT_EQ(NodeText(ElementChildren(external.Root())[0]), "b");
}

TEST(XmlDoc, DefaultDepthLimitStaysOn) {
  // Without XML_PARSE_HUGE libxml2 refuses documents nested deeper than 256 levels.
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "<a>";
  for (int i = 0; i < 5000; ++i) deep += "</a>";
  Diagnostic d = FirstError(deep);
  EXPECT_NE(d.message.find("depth"), std::string::npos) << d.message;
}

TEST(XmlDoc, ErrorsAreCapturedNotPrinted) {
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(XmlDoc::Parse("<domain><a></b></domain>", "in.xml"), DiagnosticError);
  EXPECT_THROW(XmlDoc::Parse("<domain xmlns:q='x'><q:a/><r:b/></domain>", "in.xml"), DiagnosticError);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(XmlDoc, LineNumbersBeyond65535) {
  std::string doc = "<domain>" + std::string(70000, '\n') + "<name>x</name></domain>";
  XmlDoc parsed = XmlDoc::Parse(doc, "in.xml");
  EXPECT_EQ(NodeLine(ElementChildren(parsed.Root())[0]), 70001);
}

}  // namespace
}  // namespace qlaunch::domain
