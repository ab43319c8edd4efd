// A name gtest accepts for a parameterised case, made from a file name or a label: every
// character other than a letter or digit becomes '_' ("q35-hugepage-numa" -> "q35_hugepage_numa").
#pragma once

#include <cctype>
#include <string>

namespace qlaunch::testing {

inline std::string GtestName(std::string n) {
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

}  // namespace qlaunch::testing
