// The PCI addresses of a domain XML's devices, keyed so that two documents of the same domain
// (`qlaunch dumpxml` and `virsh dumpxml`) can be compared device by device. Pure.
#pragma once

#include <map>
#include <string>

namespace qlaunch::launcher {

// Every <address type='pci'> of a domain XML, keyed by the device it belongs to: "controller
// type=pci index=1" for controllers ("/0", "/1", ... after a repeated key: USB companions share
// their index), "<tag>#<n>" (the n-th of that tag with a PCI address, from 0) for the rest; the
// value "BB:SS.F" (hex), with_alias "BB:SS.F ALIAS" ("-" for none). Throws DiagnosticError for
// XML that does not parse.
std::map<std::string, std::string> PciAddressesOf(const std::string& domain_xml, const std::string& file,
                                                  bool with_alias = false);

}  // namespace qlaunch::launcher
