// The libvirt domain XML subset qlaunch understands, as one table (understood.cc): every element
// path with the attributes qlaunch reads. CheckUnderstood() reports everything else in a document
// through ParseContext::Unsupported (a warning naming file:line and element; an error with strict).
// Values qlaunch does not support (e.g. <disk type='network'>) are reported by the section parsers.
#pragma once

#include <libxml/tree.h>

#include <optional>
#include <span>
#include <string_view>

#include "domain/parse_context.h"

namespace qlaunch::domain {

struct UnderstoodElement {
  std::string_view path;        // from the root: "domain/cpu/numa/cell"
  std::string_view attributes;  // space separated: "id cpus memory unit memAccess discard"
  bool any_content = false;     // children are not inspected (e.g. <metadata>)
};

// Every element qlaunch understands: the core table (understood.cc) and each device family's
// own, defined beside its parser (domain/parse_<family>.cc).
std::span<const UnderstoodElement> UnderstoodElements();

std::span<const UnderstoodElement> UnderstoodDiskElements();        // parse_disk.cc
std::span<const UnderstoodElement> UnderstoodControllerElements();  // parse_controller.cc
std::span<const UnderstoodElement> UnderstoodNetElements();         // parse_net.cc
std::span<const UnderstoodElement> UnderstoodCharDevElements();     // parse_chardev.cc
std::span<const UnderstoodElement> UnderstoodGraphicsElements();    // parse_graphics.cc
std::span<const UnderstoodElement> UnderstoodMiscDeviceElements();  // parse_misc_devices.cc
std::span<const UnderstoodElement> UnderstoodMachineElements();     // parse_machine.cc

// Table entry for a path, if qlaunch understands that element.
std::optional<UnderstoodElement> FindUnderstood(std::string_view path);

// Walks the document from its <domain> root and reports every element and attribute missing
// from the table. Unknown elements are reported once; their children are not visited.
void CheckUnderstood(const xmlNode* root, ParseContext& ctx);
// The same for an element that stands alone at `parent_path` (a device XML for attach-device:
// "domain/devices").
void CheckUnderstoodAt(const xmlNode* node, std::string_view parent_path, ParseContext& ctx);

}  // namespace qlaunch::domain
