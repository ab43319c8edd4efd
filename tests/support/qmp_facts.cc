#include "support/qmp_facts.h"

#include <algorithm>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace qlaunch::testing {

using nlohmann::json;

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

// A line that names what the parser looks for (`marker`) but does not match its pattern: the
// monitor's format moved under the parser, which must not then report fewer items.
[[noreturn]] void Unparsed(const char* what, const std::string& line) {
  throw std::runtime_error(std::string(what) + ": a line the parser does not understand: '" + line + "'");
}

json Sorted(json array) {
  std::sort(array.begin(), array.end());
  return array;
}

}  // namespace

std::vector<std::string> QtreeDeviceTypes(const std::string& hmp) {
  static const std::regex dev(R"(^\s*dev: ([^,]+), id)");
  std::vector<std::string> out;
  std::smatch m;
  for (const std::string& line : Lines(hmp)) {
    if (std::regex_search(line, m, dev)) out.push_back(m[1]);
    else if (line.find("dev: ") != std::string::npos) Unparsed("info qtree", line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

json BlockFacts(const json& reply) {
  json out = json::array();
  for (const json& dev : reply) {
    json f;
    f["removable"] = dev.value("removable", false);
    if (dev.contains("inserted")) {
      const json& in = dev["inserted"];
      f["file"] = in.value("file", "");
      f["format"] = in.value("drv", "");
      f["ro"] = in.value("ro", false);
    } else {
      f["file"] = "";
      f["format"] = "";
      f["ro"] = false;
    }
    out.push_back(f);
  }
  return Sorted(out);
}

json ChardevFacts(const json& reply) {
  json out = json::object();
  for (const json& c : reply) {
    const std::string label = c.value("label", "");
    if (label == "charmonitor" || label == "qmp" || label == "qmp-events") continue;
    std::string filename = c.value("filename", "");
    if (filename.starts_with("disconnected:")) filename.erase(0, std::string("disconnected:").size());
    out[label] = filename.substr(0, filename.find(':'));
  }
  return out;
}

json NetworkFacts(const std::string& hmp) {
  // "net0: index=0,type=nic,model=virtio-net-pci,macaddr=52:54:00:..."
  // " \ hostnet0: index=0,type=user,net=10.0.2.0,restrict=off"
  static const std::regex nic(R"(^(\S+): index=\d+,type=nic,model=([^,]+),macaddr=(\S+))");
  static const std::regex backend(R"(^\s*\\ (\S+): index=\d+,type=([^,\s]+))");
  json out = json::array();
  std::smatch m;
  for (const std::string& line : Lines(hmp)) {
    if (std::regex_search(line, m, nic)) {
      out.push_back({{"id", m[1]}, {"model", m[2]}, {"mac", m[3]}, {"backend", ""}});
    } else if (std::regex_search(line, m, backend) && !out.empty()) {
      out.back()["backend"] = m[2];
    } else if (line.find("type=nic") != std::string::npos) {
      Unparsed("info network", line);
    }
  }
  return Sorted(out);
}

json UsbFacts(const std::string& hmp) {
  // "  Device 0.0, Port 1, Speed 480 Mb/s, Product QEMU USB Tablet, ID: input0"
  // (", ID: ..." only for a device with an id)
  static const std::regex usb(R"(Device [0-9.]+, Port ([0-9.]+), Speed [^,]+, Product ([^,]+)(?:, ID: (\S+))?$)");
  json out = json::array();
  std::smatch m;
  for (const std::string& line : Lines(hmp)) {
    if (std::regex_search(line, m, usb)) out.push_back({{"port", m[1]}, {"product", m[2]}, {"id", m[3]}});
    else if (line.find("Device ") != std::string::npos) Unparsed("info usb", line);
  }
  return Sorted(out);
}

json DisplayFacts(const json& reply) {
  json out = {{"enabled", reply.value("enabled", false)}};
  if (out["enabled"]) {
    out["host"] = reply.value("host", "");
    if (reply.contains("service")) out["port"] = reply["service"];
    if (reply.contains("port")) out["port"] = reply["port"].is_string() ? reply["port"] : json(reply["port"].dump());
  }
  return out;
}

json MemdevFacts(const json& reply) {
  json out = json::array();
  for (const json& m : reply)
    out.push_back({{"id", m.value("id", "")},
                   {"size", m.value("size", 0)},
                   {"share", m.value("share", false)},
                   {"prealloc", m.value("prealloc", false)},
                   {"policy", m.value("policy", "")},
                   {"host-nodes", m.value("host-nodes", json::array())}});
  return Sorted(out);
}

}  // namespace qlaunch::testing
