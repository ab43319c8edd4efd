#include "common/id_set.h"

#include <gtest/gtest.h>

namespace qlaunch {
namespace {

TEST(IdSet, ParsesLibvirtSyntax) {
  EXPECT_EQ(IdSet::Parse("0-3,^1")->ToString(), "0,2-3");
  EXPECT_EQ(IdSet::Parse("^1,0-3")->ToString(), "0,2-3");
  EXPECT_EQ(IdSet::Parse(" 8, 0-1 \n")->Ids(), (std::vector<unsigned>{0, 1, 8}));
  EXPECT_TRUE(IdSet::Parse("")->Empty());
  EXPECT_TRUE(IdSet::Parse("0,^0")->Empty());
}

TEST(IdSet, RejectsGarbage) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1,", "^1-2", "0x3", "99999999999", "1 2"})
    EXPECT_FALSE(IdSet::Parse(bad).has_value()) << bad;
  EXPECT_FALSE(IdSet::Parse("5", 4).has_value());
}

TEST(IdSet, SetAlgebra) {
  IdSet a{0, 1, 2, 3}, b{2, 3, 4};
  EXPECT_EQ(a.Union(b), (IdSet{0, 1, 2, 3, 4}));
  EXPECT_EQ(a.Intersect(b), (IdSet{2, 3}));
  EXPECT_EQ(a.Minus(b), (IdSet{0, 1}));
  EXPECT_TRUE(a.Intersects(b));
  EXPECT_FALSE((IdSet{0}).Intersects(IdSet{1}));
  EXPECT_TRUE((IdSet{2, 3}).IsSubsetOf(a));
  EXPECT_FALSE(b.IsSubsetOf(a));
}

TEST(IdSet, InsertEraseKeepOrder) {
  IdSet s;
  s.Insert(5);
  s.Insert(1);
  s.Insert(5);
  s.Insert(3);
  EXPECT_EQ(s.Ids(), (std::vector<unsigned>{1, 3, 5}));
  s.Erase(3);
  s.Erase(4);
  EXPECT_EQ(s.ToString(), "1,5");
  EXPECT_EQ(s.Ranges().size(), 2u);
}

}  // namespace
}  // namespace qlaunch
