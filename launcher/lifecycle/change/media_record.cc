#include "launcher/lifecycle/change/media_record.h"

#include <libxml/tree.h>

#include <cctype>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "domain/xml_doc.h"
#include "domain/xml_node.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/change/xml_edit.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kMediaJson = "media.json";

using xml_edit::X;
using xml_edit::Child;

// Where the root element starts: after the XML declaration, comments, processing instructions,
// a DOCTYPE and whitespace. The prolog is kept byte for byte, so the root starts on its line.
size_t RootStart(const std::string& xml) {
  size_t i = 0;
  while (i < xml.size()) {
    if (std::isspace(static_cast<unsigned char>(xml[i]))) {
      ++i;
    } else if (xml.compare(i, 4, "<!--") == 0) {
      size_t end = xml.find("-->", i + 4);
      i = end == std::string::npos ? xml.size() : end + 3;
    } else if (xml.compare(i, 2, "<?") == 0) {
      size_t end = xml.find("?>", i + 2);
      i = end == std::string::npos ? xml.size() : end + 2;
    } else if (xml.compare(i, 9, "<!DOCTYPE") == 0) {
      size_t end = xml.find('>', i);
      if (size_t bracket = xml.find('[', i); bracket != std::string::npos && bracket < end) {
        end = xml.find("]>", bracket);
        if (end != std::string::npos) ++end;
      }
      i = end == std::string::npos ? xml.size() : end + 1;
    } else {
      break;
    }
  }
  return i;
}

}  // namespace

MediaNodes ReadMediaNodes(const fs::path& dir) {
  MediaNodes out;
  json j = json::parse(ReadSmallFile(dir / kMediaJson).value_or(""), nullptr, false);
  if (!j.is_object()) return out;
  if (j.contains("next_node_index") && j["next_node_index"].is_number_unsigned())
    out.next_node_index = j["next_node_index"].get<unsigned>();
  if (j.contains("nodes") && j["nodes"].is_object())
    for (const auto& [target, node] : j["nodes"].items())
      if (node.is_string()) out.nodes[target] = node.get<std::string>();
  return out;
}

std::string WithDiskSource(const std::string& xml, const std::string& file, const std::string& target,
                           const std::string& type, const std::string& source) {
  domain::XmlDoc doc = domain::XmlDoc::Parse(xml, file);
  xmlNode* root = xmlDocGetRootElement(doc.MutableDoc());
  xmlNode* disk = nullptr;
  for (xmlNode* c = Child(root, "devices") ? Child(root, "devices")->children : nullptr; c && !disk; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || domain::NodeName(c) != "disk") continue;
    const xmlNode* t = Child(c, "target");
    if (t && domain::NodeAttr(t, "dev") == target) disk = c;
  }
  if (!disk) throw std::invalid_argument(file + ": no <disk> with <target dev='" + target + "'>");
  xmlNode* src = Child(disk, "source");
  if (source.empty()) {
    if (src) {
      xmlUnlinkNode(src);
      xmlFreeNode(src);
    }
  } else {
    xmlSetProp(disk, X("type"), X(type.c_str()));
    if (!src) {
      src = xmlNewDocNode(doc.MutableDoc(), nullptr, X("source"), nullptr);
      xmlNode* before = Child(disk, "target");  // a disk with a target dev has one
      xmlAddPrevSibling(before, src);
    }
    xmlUnsetProp(src, X("file"));
    xmlUnsetProp(src, X("dev"));
    xmlSetProp(src, X(type == "block" ? "dev" : "file"), X(source.c_str()));
  }
  xmlBuffer* buf = xmlBufferCreate();
  xmlNodeDump(buf, doc.MutableDoc(), root, 0, /*format=*/0);
  std::string out = xml.substr(0, RootStart(xml));
  out.append(reinterpret_cast<const char*>(xmlBufferContent(buf)), xmlBufferLength(buf));
  xmlBufferFree(buf);
  return out + "\n";
}

void RecordMediaChange(const fs::path& dir, const std::string& target, const std::string& type,
                       const std::string& source, const std::string& node, unsigned next_node_index) {
  const fs::path from = RunningXmlPath(dir);
  const std::optional<std::string> xml = ReadSmallFile(from);
  if (!xml) throw std::runtime_error("cannot read " + from.string());
  const std::string running = WithDiskSource(*xml, from.string(), target, type, source);
  MediaNodes media = ReadMediaNodes(dir);
  media.next_node_index = next_node_index;
  media.nodes[target] = node;
  json j = {{"next_node_index", media.next_node_index}, {"nodes", media.nodes}};
  // media.json first: the node names are what a retry needs; running.xml is what the verbs show.
  AtomicWrite(dir / kMediaJson, j.dump(2) + "\n");
  AtomicWrite(dir / "running.xml", running);
}

void ForgetMedia(const fs::path& dir, const std::string& target) {
  MediaNodes media = ReadMediaNodes(dir);
  if (!media.nodes.erase(target)) return;
  json j = {{"next_node_index", media.next_node_index}, {"nodes", media.nodes}};
  AtomicWrite(dir / kMediaJson, j.dump(2) + "\n");
}

}  // namespace qlaunch::launcher
