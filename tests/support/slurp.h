// A whole file's bytes as a string ("" when it cannot be read), for tests reading fixtures,
// state files and /proc.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace qlaunch::testing {

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace qlaunch::testing
