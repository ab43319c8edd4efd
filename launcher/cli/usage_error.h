// A command line that cannot be run as given, found by a verb after CLI11's parse (options that
// exclude each other in a way CLI11 cannot say, an argument that only makes sense with another):
// RunCli prints "qlaunch: error: VERB: message" and exits 2, as for CLI11's own usage errors.
#pragma once

#include <stdexcept>
#include <string>

namespace qlaunch::launcher {

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace qlaunch::launcher
