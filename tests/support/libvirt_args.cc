#include "support/libvirt_args.h"

#include <fstream>
#include <stdexcept>

namespace qlaunch::testing {

LibvirtArgs ReadLibvirtArgs(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  LibvirtArgs args;
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() >= 2 && line.compare(line.size() - 2, 2, " \\") == 0) line.resize(line.size() - 2);
    if (line.empty()) continue;
    if (args.binary.empty()) {
      if (line.find('=') != std::string::npos && line[0] != '/') continue;  // environment block
      args.binary = line;
      continue;
    }
    size_t space = line.find(' ');
    std::string opt = line.substr(0, space);
    std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') value = value.substr(1, value.size() - 2);
    args.options.emplace_back(opt, value);
  }
  return args;
}

std::vector<std::string> LibvirtArgs::Values(const std::string& option) const {
  std::vector<std::string> out;
  for (const auto& [o, v] : options)
    if (o == option) out.push_back(v);
  return out;
}

std::vector<nlohmann::json> LibvirtArgs::JsonObjects() const {
  std::vector<nlohmann::json> out;
  for (const auto& v : Values("-object"))
    if (!v.empty() && v.front() == '{') out.push_back(nlohmann::json::parse(v));
  return out;
}

nlohmann::json DeviceToJson(const std::string& value) {
  if (!value.empty() && value.front() == '{') return nlohmann::json::parse(value);
  nlohmann::json j;
  size_t start = 0;
  bool first = true;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string item = value.substr(start, comma - start);
    start = comma + 1;
    if (first) {
      j["driver"] = item;
      first = false;
    } else {
      size_t eq = item.find('=');
      std::string key = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
      bool numeric = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
      if (numeric)
        j[key] = std::stoull(v);
      else
        j[key] = v;
    }
    if (comma == value.size()) break;
  }
  return j;
}

}  // namespace qlaunch::testing
