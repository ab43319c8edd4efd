#include "qemu_cmd/option_escape.h"

namespace qlaunch::qemu {

std::string EscapeOptionValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    out.push_back(c);
    if (c == ',') out.push_back(',');
  }
  return out;
}

KeyValueBuilder::KeyValueBuilder(std::string_view head) : out_(EscapeOptionValue(head)) {}

void KeyValueBuilder::Sep() {
  if (!out_.empty()) out_.push_back(',');
}

KeyValueBuilder& KeyValueBuilder::Add(std::string_view key, std::string_view value) {
  Sep();
  out_.append(key);
  out_.push_back('=');
  out_.append(EscapeOptionValue(value));
  return *this;
}

KeyValueBuilder& KeyValueBuilder::Add(std::string_view key, uint64_t value) {
  return Add(key, std::string_view(std::to_string(value)));
}

KeyValueBuilder& KeyValueBuilder::Add(std::string_view key, int value) {
  return Add(key, std::string_view(std::to_string(value)));
}

KeyValueBuilder& KeyValueBuilder::AddBool(std::string_view key, bool value) {
  return Add(key, value ? "on" : "off");
}

KeyValueBuilder& KeyValueBuilder::AddList(std::string_view key, const IdSet& ids) {
  for (auto [lo, hi] : ids.Ranges()) {
    std::string v = std::to_string(lo);
    if (hi != lo) v += "-" + std::to_string(hi);
    Add(key, std::string_view(v));
  }
  return *this;
}

}  // namespace qlaunch::qemu
