#include "common/shell_quote.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace qlaunch {
namespace {

TEST(ShellQuote, LeavesPlainWordsAlone) {
  EXPECT_EQ(ShellQuote("-machine"), "-machine");
  EXPECT_EQ(ShellQuote("pc,memory-backend=pc.ram"), "pc,memory-backend=pc.ram");
}

TEST(ShellQuote, QuotesJsonSpacesAndQuotes) {
  EXPECT_EQ(ShellQuote(R"({"id":"a"})"), R"('{"id":"a"}')");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), R"('it'\''s')");
  EXPECT_EQ(ShellQuote(""), "''");
}

// The real check: a shell splits the joined line back into exactly the argv we started with.
TEST(ShellQuote, RoundTripsThroughARealShell) {
  std::vector<std::string> argv = {"printf", "%s\\n", "x,debug-threads=on -device foo", R"({"a":"b c"})",
                                   "it's", "$HOME", "`id`", "*", ""};
  std::string cmd = ShellJoin(argv);
  FILE* p = popen(("/bin/sh -c " + ShellQuote(cmd)).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  std::array<char, 256> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  ASSERT_EQ(pclose(p), 0);
  std::string expected;
  for (size_t i = 2; i < argv.size(); ++i) expected += argv[i] + "\n";
  EXPECT_EQ(out, expected);
}

}  // namespace
}  // namespace qlaunch
