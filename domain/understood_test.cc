#include "domain/understood.h"

#include <gtest/gtest.h>

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

TEST(Understood, LooksUpPathsAndAttributes) {
  auto cell = FindUnderstood("domain/cpu/numa/cell");
  ASSERT_TRUE(cell);
  EXPECT_NE(cell->attributes.find("memAccess"), std::string_view::npos);
  EXPECT_TRUE(FindUnderstood("domain/devices/memory/target/node"));
  EXPECT_FALSE(FindUnderstood("domain/devices/controller"));
  EXPECT_TRUE(FindUnderstood("domain/clock"));  // the machine family's table
  EXPECT_FALSE(FindUnderstood("domain/blkiotune"));
  EXPECT_FALSE(FindUnderstood("domain/cpu/cell"));  // paths are exact, not by element name
}

}  // namespace
}  // namespace qlaunch::domain
