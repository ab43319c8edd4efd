// The checks behind ValidateDomain, grouped by concern (validate.cc, validate_memory.cc,
// validate_numa.cc). Messages keep libvirt 9.0's wording where libvirt has one for the same
// problem, so conformance tests can compare. Severity: what libvirt rejects is an error; what
// libvirt silently adjusts (cells vs <memory>, currentMemory above memory) is a warning.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"

namespace qlaunch::domain {

class Findings {
 public:
  explicit Findings(const DomainDef& def) : file_(def.file) {}
  void Error(int line, std::string element, std::string message);
  void Warning(int line, std::string element, std::string message);
  std::vector<Diagnostic> Take() { return std::move(diags_); }

 private:
  std::string file_;
  std::vector<Diagnostic> diags_;
};

std::string KiB(uint64_t bytes);  // "1048576 KiB"

void CheckName(const DomainDef& def, Findings& out);
void CheckVcpus(const DomainDef& def, Findings& out);
void CheckMemorySizes(const DomainDef& def, Findings& out);
void CheckMemoryBacking(const DomainDef& def, Findings& out);
void CheckMemoryDevices(const DomainDef& def, Findings& out);
void CheckMemoryDevice(const DomainDef& def, const MemoryDevice& mem, Findings& out);
void CheckNumaCells(const DomainDef& def, Findings& out);
void CheckNumaTune(const DomainDef& def, Findings& out);

}  // namespace qlaunch::domain
