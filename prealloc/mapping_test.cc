#include "prealloc/mapping.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "prealloc/memfd.h"

namespace qlaunch::prealloc {
namespace {

// The VmFlags line of the mapping that starts at `addr` in /proc/self/smaps, "" when none does.
std::string VmFlagsOf(const void* addr) {
  char start[32];
  std::snprintf(start, sizeof start, "%lx-", reinterpret_cast<unsigned long>(addr));
  std::ifstream smaps("/proc/self/smaps");
  bool in = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.find('-') != std::string::npos && line.find(' ') > line.find('-') &&
        std::isxdigit(static_cast<unsigned char>(line[0])))
      in = line.rfind(start, 0) == 0;
    if (in && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

// A child forked meanwhile (QEMU) must not get the mapping: fork would copy its page tables while
// holding the mmap lock the populate workers' faults need. "dc" is VM_DONTCOPY: do not copy on fork.
TEST(Mapping, IsNotInheritedByAFork) {
  Memfd fd = Memfd::Create("qlaunch-mapping-test", 4u << 20, 4096);
  Mapping m = Mapping::Map(fd);
  const std::string flags = VmFlagsOf(m.data());
  ASSERT_NE(flags, "") << "no mapping at " << static_cast<const void*>(m.data()) << " in /proc/self/smaps";
  EXPECT_NE((flags + " ").find(" dc "), std::string::npos) << flags;
}

}  // namespace
}  // namespace qlaunch::prealloc
