// ShellQuote: render an argv element so a POSIX shell reads it back unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qlaunch {

std::string ShellQuote(std::string_view arg);
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace qlaunch
