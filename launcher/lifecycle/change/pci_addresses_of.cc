#include "launcher/lifecycle/change/pci_addresses_of.h"

#include <cstdio>
#include <cstdlib>

#include "domain/xml_doc.h"
#include "domain/xml_node.h"

namespace qlaunch::launcher {

using domain::ElementChildren;
using domain::NodeAttr;
using domain::NodeName;

std::map<std::string, std::string> PciAddressesOf(const std::string& domain_xml, const std::string& file,
                                                  bool with_alias) {
  domain::XmlDoc doc = domain::XmlDoc::Parse(domain_xml, file);
  std::map<std::string, std::string> out;
  std::map<std::string, int> nth;
  for (const xmlNode* devices : ElementChildren(doc.Root(), "devices"))
    for (const xmlNode* dev : ElementChildren(devices)) {
      const xmlNode* a = nullptr;
      for (const xmlNode* c : ElementChildren(dev, "address"))
        if (NodeAttr(c, "type").value_or("") == "pci") a = c;
      if (!a) continue;
      const std::string name = NodeName(dev);
      std::string key = name + "#" + std::to_string(nth[name]++);
      if (name == "controller")
        key = "controller type=" + NodeAttr(dev, "type").value_or("?") + " index=" + NodeAttr(dev, "index").value_or("?");
      auto num = [&](const char* attr) { return std::strtoul(NodeAttr(a, attr).value_or("0").c_str(), nullptr, 0); };
      char b[32];
      std::snprintf(b, sizeof b, "%02lx:%02lx.%lx", num("bus"), num("slot"), num("function"));
      if (out.count(key)) key += "/" + std::to_string(nth[key]++);  // USB companions share their index
      std::string value = b;
      if (with_alias) {
        const auto alias = ElementChildren(dev, "alias");
        value += " " + (alias.empty() ? std::string("-") : NodeAttr(alias[0], "name").value_or("-"));
      }
      out[key] = value;
    }
  return out;
}

}  // namespace qlaunch::launcher
