#include "support/shell_words.h"

#include <cctype>

namespace qlaunch::testing {

std::vector<std::string> SplitShellWords(std::string_view s) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  size_t i = 0;
  auto fail = [&](const char* what) {
    throw std::invalid_argument(std::string(what) + " at offset " + std::to_string(i) + " in: " + std::string(s));
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      ++i;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      size_t end = s.find('\'', i + 1);
      if (end == std::string_view::npos) fail("unterminated single quote");
      word.append(s.substr(i + 1, end - i - 1));
      i = end + 1;
    } else if (c == '"') {
      ++i;
      for (;;) {
        if (i >= s.size()) fail("unterminated double quote");
        char d = s[i];
        if (d == '"') break;
        if (d == '\\' && i + 1 < s.size() && std::string_view("\"\\$`\n").find(s[i + 1]) != std::string_view::npos) {
          if (s[i + 1] != '\n') word.push_back(s[i + 1]);
          i += 2;
          continue;
        }
        word.push_back(d);
        ++i;
      }
      ++i;
    } else if (c == '\\') {
      if (i + 1 >= s.size()) fail("trailing backslash");
      if (s[i + 1] != '\n') word.push_back(s[i + 1]);
      i += 2;
    } else {
      word.push_back(c);
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

namespace {

bool IsAssignment(const std::string& w) {
  size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (!(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_')) return false;
  for (size_t i = 1; i < eq; ++i)
    if (!(std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '_')) return false;
  return true;
}

}  // namespace

ShellCommand ParseShellCommand(std::string_view line) {
  ShellCommand cmd;
  for (std::string& w : SplitShellWords(line)) {
    if (cmd.argv.empty() && IsAssignment(w))
      cmd.env.push_back(std::move(w));
    else
      cmd.argv.push_back(std::move(w));
  }
  return cmd;
}

}  // namespace qlaunch::testing
