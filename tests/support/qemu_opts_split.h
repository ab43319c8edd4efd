// How QEMU's option parser (QemuOpts, util/qemu-option.c) reads a key=value option value,
// re-implemented for tests: items are separated by single commas and ",," stands for a
// literal comma inside a value; the first item is an implied value (no key) when a comma
// comes before any '='. Lets tests check what QEMU would see, independently of the code that
// wrote the string.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qlaunch::testing {

// The (key, value) pairs in order; the implied first value has an empty key. A key is taken
// verbatim up to '=' (QEMU does not unescape keys); a value runs to the next single comma.
inline std::vector<std::pair<std::string, std::string>> QemuOptsPairs(std::string_view s, bool implied_first = true) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t p = 0;
  bool first = true;
  auto read_value = [&](size_t from) {
    std::string v;
    size_t i = from;
    for (; i < s.size(); ++i) {
      if (s[i] == ',') {
        if (i + 1 < s.size() && s[i + 1] == ',') {
          v.push_back(',');
          ++i;
          continue;
        }
        break;
      }
      v.push_back(s[i]);
    }
    p = i < s.size() ? i + 1 : s.size();
    return v;
  };
  while (p < s.size()) {
    size_t len = s.substr(p).find_first_of("=,");
    if (len == std::string_view::npos || s[p + len] != '=') {
      if (first && implied_first) {
        out.emplace_back("", read_value(p));
      } else {  // a flag ("foo" means foo=on)
        std::string key(s.substr(p, len == std::string_view::npos ? s.size() - p : len));
        p = len == std::string_view::npos ? s.size() : p + len + 1;
        out.emplace_back(key, "on");
      }
    } else {
      std::string key(s.substr(p, len));
      out.emplace_back(key, read_value(p + len + 1));
    }
    first = false;
  }
  return out;
}

}  // namespace qlaunch::testing
