// One device element standing alone, as `attach-device` and `detach-device` read it from a
// file (virsh's DEVICE.xml): <disk>, <interface>, <rng>, <channel>, ... parsed by the same family
// parsers as inside a <domain>, with errors naming the device file and its line.
#pragma once

#include <string>
#include <string_view>

#include "domain/domain_def.h"

namespace qlaunch::domain {

struct DeviceFragment {
  std::string file;     // the device XML's path, for diagnostics
  std::string text;     // the bytes parsed (what a record of the device keeps)
  std::string element;  // the root element's name: "disk", "interface", ...
  int line = 0;         // its line in the file
  Devices devices;      // exactly one device, in the list of its family
  std::vector<Diagnostic> warnings;
};

// Throws DiagnosticError (file:line: element: message): malformed XML, a root that is not a
// device element, a device qlaunch does not support (every Unsupported finding is an error
// here: a device attached half-understood would differ from what the user asked for).
DeviceFragment ParseDeviceXml(std::string_view xml, const std::string& file);
DeviceFragment ParseDeviceFile(const std::string& path);

}  // namespace qlaunch::domain
