#include "domain/understood.h"
#include "support/build_paths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace qlaunch::domain {
namespace {

TEST(Understood, TableIsATreeRootedAtDomain) {
  std::set<std::string_view> paths;
  for (const UnderstoodElement& e : UnderstoodElements()) {
    EXPECT_TRUE(paths.insert(e.path).second) << "duplicate " << e.path;
    EXPECT_TRUE(e.path == "domain" || e.path.starts_with("domain/")) << e.path;
    size_t slash = e.path.rfind('/');
    if (slash != std::string_view::npos) {
      EXPECT_TRUE(paths.contains(e.path.substr(0, slash))) << e.path << " listed before its parent";
    }
  }
}

// The fuzzer's dictionary (tests/fuzz/domain.dict) names every element and attribute qlaunch
// reads, so that the fuzzer reaches each family's parser.
TEST(Understood, EveryNameIsInTheFuzzDictionary) {
  std::ifstream in(std::string(QLAUNCH_SOURCE_DIR) + "/tests/fuzz/domain.dict");
  std::string dict((std::istreambuf_iterator<char>(in)), {});
  ASSERT_FALSE(dict.empty());
  for (const UnderstoodElement& e : UnderstoodElements()) {
    std::string_view name = e.path.substr(e.path.rfind('/') + 1);
    EXPECT_NE(dict.find("\"<" + std::string(name) + ">\""), std::string::npos) << "<" << name << "> (" << e.path << ")";
    std::string_view attrs = e.attributes;
    while (!attrs.empty()) {
      std::string_view a = attrs.substr(0, attrs.find(' '));
      EXPECT_NE(dict.find("\"" + std::string(a) + "='\""), std::string::npos) << a << "= (" << e.path << ")";
      attrs.remove_prefix(std::min(attrs.size(), a.size() + 1));
    }
  }
}

TEST(Understood, LooksUpPathsAndAttributes) {
  auto cell = FindUnderstood("domain/cpu/numa/cell");
  ASSERT_TRUE(cell);
  EXPECT_NE(cell->attributes.find("memAccess"), std::string_view::npos);
  EXPECT_TRUE(FindUnderstood("domain/devices/memory/target/node"));
  EXPECT_TRUE(FindUnderstood("domain/devices/controller"));
  EXPECT_FALSE(FindUnderstood("domain/devices/controller/driver"));
  EXPECT_TRUE(FindUnderstood("domain/clock"));  // the machine family's table
  EXPECT_FALSE(FindUnderstood("domain/blkiotune"));
  EXPECT_FALSE(FindUnderstood("domain/cpu/cell"));  // paths are exact, not by element name
}

}  // namespace
}  // namespace qlaunch::domain
