// Helpers to pick parts out of a QEMU argv in tests.
#pragma once

#include <string>
#include <vector>

namespace qlaunch::testing {

// The memory part of an argv: thread-contexts, memory backends, -numa and the -device of
// DIMMs/NVDIMMs, as "opt value" strings in order.
inline std::vector<std::string> MemoryArgs(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    const std::string& o = argv[i];
    const std::string& v = argv[i + 1];
    bool mem = (o == "-object" && (v.find("memory-backend") != std::string::npos ||
                                   v.find("thread-context") != std::string::npos)) ||
               o == "-numa" ||
               (o == "-device" && (v.rfind("pc-dimm", 0) == 0 || v.rfind("nvdimm", 0) == 0 ||
                                   v.find(R"("driver":"pc-dimm")") != std::string::npos ||
                                   v.find(R"("driver":"nvdimm")") != std::string::npos));
    if (mem) out.push_back(o + " " + v);
  }
  return out;
}

// The value after the first occurrence of `opt`, or "<absent>".
inline std::string OptionValue(const std::vector<std::string>& argv, const std::string& opt) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == opt) return argv[i + 1];
  return "<absent>";
}

}  // namespace qlaunch::testing
