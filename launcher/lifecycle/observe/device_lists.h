// The rows of `qlaunch domblklist` and `domiflist`, read from a domain XML as virsh 9.0 reads
// them from the live XML (launcher/lifecycle/change/live_xml.h). Pure.
#pragma once

#include <string>
#include <vector>

#include <libxml/tree.h>
#include <nlohmann/json.hpp>

#include "domain/xml_doc.h"

namespace qlaunch::launcher {

// One <disk>: type ("file", "block"), device ("disk", "cdrom"), target dev, source ("" when the
// disk has none: an empty cdrom; virsh prints "-").
struct BlockRow {
  std::string type, device, target, source;
};

// One <interface>: its tap (<target dev>, "" for none), type, source (bridge, network or
// device; "" for none), model, MAC.
struct InterfaceRow {
  std::string interface, type, source, model, mac;
};

// The elements named `name` among the <devices> of a parsed domain XML, in document order
// (dom_stats.cc reads them too).
std::vector<const xmlNode*> DevicesNamed(const domain::XmlDoc& doc, const char* name);

// Throw DiagnosticError when the XML does not parse.
std::vector<BlockRow> BlockDevices(const std::string& domain_xml, const std::string& file);
std::vector<InterfaceRow> Interfaces(const std::string& domain_xml, const std::string& file);

// [{"type","device","target","source"}] and [{"interface","type","source","model","mac"}]; what
// virsh prints as "-" is null.
nlohmann::json ToJson(const std::vector<BlockRow>& rows);
nlohmann::json ToJson(const std::vector<InterfaceRow>& rows);

}  // namespace qlaunch::launcher
