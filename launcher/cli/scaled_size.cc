#include "launcher/cli/scaled_size.h"

#include <cctype>
#include <optional>
#include <stdexcept>

#include "domain/parser.h"

namespace qlaunch::launcher {

uint64_t VirshScaledSize(const std::string& text, const std::string& verb) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  if (unit.size() == 1 && std::string("mgt").find(unit[0]) != std::string::npos)
    unit[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
  const std::optional<uint64_t> bytes =
      digits == 0 ? std::nullopt : domain::ParseMemorySize(text.substr(0, digits), unit, "KiB");
  if (!bytes)
    throw std::runtime_error(verb + ": invalid memory size '" + text +
                             "': give a number of KiB, or a number with a unit (512M, 2G, 1048576KiB)");
  return *bytes;
}

}  // namespace qlaunch::launcher
