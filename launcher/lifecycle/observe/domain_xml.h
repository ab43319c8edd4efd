// `qlaunch dumpxml`, `domblklist`, `domiflist`: a domain's XML from its state dir. The live XML
// (launcher/lifecycle/change/live_xml.h) from what the state dir records of the running domain and what
// its QEMU says of its ptys and DIMMs; with inactive, the XML as it was given.
#pragma once

#include <string>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/domain_state.h"

namespace qlaunch::launcher {

// The live XML of a running domain; `verb` is what the state table is asked (kDumpxml,
// kDomblklist, kDomiflist). Throws std::runtime_error for an unknown domain, one not running
// (naming `dumpxml --inactive` when the state dir still holds its XML), WrongStateError for a
// state that refuses the verb (still starting).
std::string LiveDomainXmlOf(const StateDir& state, const std::string& name, Verb verb);

// The XML as given (the state dir's domain.xml), in any state while the state dir has it; a stale
// entry is left where it is (the next list, destroy or start cleans it up). Throws
// std::runtime_error for an unknown domain and when the state dir has no XML (yet).
std::string InactiveDomainXmlOf(const StateDir& state, const std::string& name);

}  // namespace qlaunch::launcher
