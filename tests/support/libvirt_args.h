// Reading libvirt's expected-args files (tests/qemuxml2argvdata/*.args format): one option and
// its value per line, JSON values in single quotes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace qlaunch::testing {

struct LibvirtArgs {
  std::string binary;
  std::vector<std::pair<std::string, std::string>> options;  // in order; value "" for flags

  std::vector<std::string> Values(const std::string& option) const;
  // Every -object whose value is JSON, parsed, in order.
  std::vector<nlohmann::json> JsonObjects() const;
};

LibvirtArgs ReadLibvirtArgs(const std::string& path);

// A -device value, JSON or key=value ("pc-dimm,node=0,slot=2"), as a JSON object with numbers
// for numeric values, so both spellings compare equal.
nlohmann::json DeviceToJson(const std::string& value);


}  // namespace qlaunch::testing
