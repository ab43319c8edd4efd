// A defined domain (launcher/host/defined_domains.h): what `define` and `edit` check of an XML
// before they keep it, how they keep it (as libvirt's define does: a name taken by a definition
// with another <uuid> is refused, the same <uuid> replaces it, a missing <uuid> is generated), and
// the definition `start NAME` and `run NAME` start from.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "launcher/host/defined_domains.h"

namespace qlaunch::launcher {

// What the host checks of `validate` leave out for a domain that is not running, said once.
inline constexpr const char* kLeftOutForDefinition =
    "not checked for a domain that is defined, not started: free hugepages, KVM (start checks them)";

// Parses `xml` (diagnostics name `file`), validates it and plans it on this host with its QEMU, as
// `validate` does without the free hugepages and KVM. Every problem found, warnings included;
// *def is the parsed domain when there is no error.
std::vector<Diagnostic> CheckDefinition(const std::string& xml, const std::string& file, domain::DomainDef* def);

// Keeps `xml` (checked: `def` is its parse) as the definition of def.name. Refuses, with libvirt's
// words, a name defined with another <uuid> (or none) and a <uuid> another name is defined with.
// Returns true when it replaced the definition of the same <uuid>. The stored XML gets a <uuid>
// when it has none. With `edit_of` (edit: the definition the edit started from), the definition
// of def.name is replaced whatever its <uuid> was, but only while it is still `*edit_of` (else
// refused: someone changed it meanwhile).
bool DefineDomain(const DefinedDomains& defined, const domain::DomainDef& def, const std::string& xml,
                  const std::string* edit_of = nullptr);

// What `start` and `run` read for their argument: `arg` itself when it is "-" or a file that
// exists, else the definition of the domain it names when there is one, else `arg` (whose
// absence the caller reports).
std::string DefinitionOrFile(const std::string& arg, const DefinedDomains& defined = DefinedDomains());

// When `path` is a definition (<root>/NAME.xml), that its <name> is NAME: a definition renamed by
// hand would start another domain than the one asked for. DiagnosticError with the file and line
// (of <name>, or of what does not parse).
void CheckDefinitionName(const std::string& path, const DefinedDomains& defined = DefinedDomains());

}  // namespace qlaunch::launcher
