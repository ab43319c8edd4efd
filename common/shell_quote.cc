#include "common/shell_quote.h"

namespace qlaunch {

std::string ShellQuote(std::string_view arg) {
  bool plain = !arg.empty();
  for (char c : arg) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                std::string_view("_-+=.,/:@%").find(c) != std::string_view::npos;
    if (!safe) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(arg);
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(a);
  }
  return out;
}

}  // namespace qlaunch
