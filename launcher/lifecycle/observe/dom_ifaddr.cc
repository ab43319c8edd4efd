#include "launcher/lifecycle/observe/dom_ifaddr.h"

#include <cstdio>
#include <stdexcept>

#include "domain/xml_doc.h"
#include "domain/xml_node.h"

namespace qlaunch::launcher {

using nlohmann::json;

namespace {

std::string Printf(const char* fmt, const std::string& a, const std::string& b, const std::string& c) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, a.c_str(), b.c_str(), c.c_str());
  return buf;
}

std::runtime_error Malformed(const std::string& what, const json& j) {
  return std::runtime_error("guest-network-get-interfaces reply: " + what + ": " + j.dump());
}

}  // namespace

std::vector<IfAddrRow> AgentInterfaces(const json& reply) {
  if (!reply.is_array()) throw Malformed("not a list of interfaces", reply);
  std::vector<IfAddrRow> out;
  for (const json& iface : reply) {
    if (!iface.is_object() || !iface.contains("name") || !iface["name"].is_string())
      throw Malformed("an interface without a name", iface);
    std::string name = iface["name"];
    name = name.substr(0, name.find(':'));  // "eth0:1" is an alias of eth0
    IfAddrRow* row = nullptr;
    for (IfAddrRow& r : out)
      if (r.name == name) row = &r;
    if (!row) {
      out.push_back({name, iface.value("hardware-address", ""), {}});
      row = &out.back();
    }
    if (!iface.contains("ip-addresses")) continue;
    if (!iface["ip-addresses"].is_array()) throw Malformed("ip-addresses is not a list", iface);
    for (const json& a : iface["ip-addresses"]) {
      if (!a.is_object() || !a.contains("ip-address-type") || !a.contains("ip-address") || !a.contains("prefix") ||
          !a["ip-address"].is_string() || !a["prefix"].is_number_unsigned())
        throw Malformed("an address without ip-address-type, ip-address or prefix", a);
      const std::string type = a["ip-address-type"].is_string() ? a["ip-address-type"].get<std::string>() : "";
      if (type != "ipv4" && type != "ipv6") throw Malformed("unknown ip-address-type", a);
      row->addresses.push_back({type, a["ip-address"], a["prefix"].get<unsigned>()});
    }
  }
  return out;
}

std::vector<IfAddrRow> UserNetworkLeases(const std::vector<LeaseNic>& nics) {
  std::vector<IfAddrRow> out;
  for (const LeaseNic& n : nics)
    if (n.type == "user") out.push_back({n.tap.empty() ? "-" : n.tap, n.mac, {{"ipv4", "10.0.2.15", 24}}});
  return out;
}

std::vector<LeaseNic> LeaseNics(const std::string& live_xml, const std::string& file) {
  using domain::ElementChildren;
  using domain::NodeAttr;
  const domain::XmlDoc doc = domain::XmlDoc::Parse(live_xml, file);
  auto attr_of = [](const xmlNode* n, const char* child, const char* attr) {
    for (const xmlNode* c : ElementChildren(n, child))
      if (auto v = NodeAttr(c, attr)) return *v;
    return std::string();
  };
  std::vector<LeaseNic> out;
  for (const xmlNode* devices : ElementChildren(doc.Root(), "devices"))
    for (const xmlNode* n : ElementChildren(devices, "interface"))
      out.push_back({NodeAttr(n, "type").value_or(""), attr_of(n, "mac", "address"), attr_of(n, "target", "dev")});
  return out;
}

std::string IfAddrTable(const std::vector<IfAddrRow>& rows, bool full) {
  std::string out = Printf(" %-10s %-20s %-8s     ", "Name", "MAC address", "Protocol") + "Address\n" +
                    std::string(79, '-') + "\n";
  for (const IfAddrRow& r : rows) {
    if (r.addresses.empty()) {
      out += Printf(" %-10s %-17s    %-12s", r.name, r.mac.empty() ? "N/A" : r.mac, "N/A") + " N/A\n";
      continue;
    }
    for (size_t j = 0; j < r.addresses.size(); ++j) {
      const IfAddress& a = r.addresses[j];
      const std::string addr = Printf("%-12s %s/", a.protocol, a.address, "") + std::to_string(a.prefix);
      const bool named = j == 0 || full;  // virsh repeats the name and MAC only with --full
      out += Printf(" %-10s %-17s    %s\n", named ? r.name : "-", named ? r.mac : "-", addr);
    }
  }
  return out + "\n";  // virsh 9.0 ends the table with an empty line
}

json ToJson(const std::vector<IfAddrRow>& rows) {
  json out = json::array();
  for (const IfAddrRow& r : rows) {
    json addrs = json::array();
    for (const IfAddress& a : r.addresses)
      addrs.push_back({{"protocol", a.protocol}, {"address", a.address}, {"prefix", a.prefix}});
    out.push_back({{"name", r.name}, {"mac", r.mac.empty() ? json(nullptr) : json(r.mac)}, {"addresses", addrs}});
  }
  return out;
}

}  // namespace qlaunch::launcher
