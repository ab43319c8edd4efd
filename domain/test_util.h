// Helpers shared by the domain/ unit tests (header only; not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "domain/parser.h"
#include "support/build_paths.h"

namespace qlaunch::domain::testing {

// A minimal valid domain whose first line holds the required elements, so `body` starts on line 2.
inline std::string Doc(std::string_view body, std::string_view memory = "<memory unit='GiB'>4</memory>",
                       std::string_view vcpu = "<vcpu>4</vcpu>") {
  return "<domain type='kvm'><name>t</name>" + std::string(memory) + std::string(vcpu) + "\n" +
         std::string(body) + "\n</domain>\n";
}

inline std::string SourceDir() { return QLAUNCH_SOURCE_DIR; }
inline std::string FixturePath(std::string_view name) {
  return SourceDir() + "/tests/fixtures/domains/" + std::string(name);
}

// The error thrown by ParseDomainXml for `xml`, or a failed expectation when it parses.
inline DiagnosticError ParseError(std::string_view xml, const ParseOptions& opts = {}) {
  try {
    ParseDomainXml(xml, "test.xml", opts);
  } catch (const DiagnosticError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a parse error for:\n" << xml;
  return DiagnosticError(Diagnostic{});
}

// A device element the parser must refuse: with `message` in the error, on line 3 (inside
// <devices>, which Doc puts on line 2) and naming `element`.
struct BadDevice {
  const char* xml;
  const char* message;
  const char* element;
};

inline void ExpectDevicesRefused(std::initializer_list<BadDevice> bad) {
  for (const BadDevice& b : bad) {
    SCOPED_TRACE(b.xml);
    DiagnosticError e = ParseError(Doc(std::string("<devices>\n") + b.xml + "\n</devices>"));
    ASSERT_FALSE(e.diagnostics().empty());
    const Diagnostic& d = e.diagnostics().front();
    EXPECT_NE(d.message.find(b.message), std::string::npos) << d.ToString();
    EXPECT_EQ(d.line, 3) << d.ToString();
    EXPECT_EQ(d.element, b.element) << d.ToString();
  }
}

}  // namespace qlaunch::domain::testing
