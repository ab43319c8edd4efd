// ParseDomainXml: libvirt domain XML -> DomainDef, with libxml2 configured safely
// (no network, no external entities or DTDs, default expansion limits, size cap).
#pragma once

#include <string>
#include <string_view>

#include "domain/domain_def.h"

namespace qlaunch::domain {

struct ParseOptions {
  bool strict = false;  // unsupported elements/attributes are errors instead of warnings
  size_t max_bytes = 4 << 20;
};

// Throws DiagnosticError (file:line:element) on syntax errors, wrong structure, bad units or
// numbers. Unsupported elements become warnings in DomainDef::warnings (errors with strict).
DomainDef ParseDomainXml(std::string_view xml, const std::string& file_name, const ParseOptions& opts = {});
DomainDef ParseDomainFile(const std::string& path, const ParseOptions& opts = {});

// "1024" + "MiB" -> bytes, libvirt units (b, bytes, KB, k, KiB, MB, M, MiB, GB, G, GiB, TB, T, TiB;
// KB/MB/GB/TB are powers of 1000). Empty unit means default_unit. Rounded up to whole KiB.
// std::nullopt for unknown unit, garbage, negative or overflowing numbers.
std::optional<uint64_t> ParseMemorySize(std::string_view number, std::string_view unit,
                                        std::string_view default_unit = "KiB");

}  // namespace qlaunch::domain
