#include "qemu_cmd/option_escape.h"

#include <gtest/gtest.h>

#include "tests/support/qemu_opts_split.h"

namespace qlaunch::qemu {
namespace {

using testing::QemuOptsPairs;
using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(EscapeOptionValue, DoublesEveryComma) {
  struct Case { const char* in; const char* out; };
  for (const Case& c : std::initializer_list<Case>{
           {"", ""}, {"plain", "plain"}, {"a,b", "a,,b"}, {",", ",,"}, {",,", ",,,,"},
           {"x,debug-threads=on -device foo", "x,,debug-threads=on -device foo"}, {"a=b", "a=b"}}) {
    EXPECT_EQ(EscapeOptionValue(c.in), c.out) << c.in;
  }
}

TEST(EscapeOptionValue, QemuReadsBackTheOriginal) {
  for (const char* v : {"a,b", ",lead", "trail,", "a,,b", "x,id=evil,share=on"}) {
    auto pairs = QemuOptsPairs("k=" + EscapeOptionValue(v), /*implied_first=*/false);
    ASSERT_EQ(pairs.size(), 1u) << v;
    EXPECT_EQ(pairs[0], (std::pair<std::string, std::string>{"k", v}));
  }
}

TEST(KeyValueBuilder, HeadAndValuesAreEscaped) {
  KeyValueBuilder kv("pc,accel=kvm");
  kv.Add("path", "/a,b").Add("n", uint64_t{5}).AddBool("on", true).AddBool("off", false);
  EXPECT_EQ(kv.str(), "pc,,accel=kvm,path=/a,,b,n=5,on=on,off=off");
  EXPECT_EQ(QemuOptsPairs(kv.str()),
            (Pairs{{"", "pc,accel=kvm"}, {"path", "/a,b"}, {"n", "5"}, {"on", "on"}, {"off", "off"}}));
}

TEST(KeyValueBuilder, ListsRepeatTheKeyPerContiguousRun) {
  struct Case { IdSet ids; const char* out; };
  for (const Case& c : std::initializer_list<Case>{
           {IdSet{0}, "x,host-nodes=0"},
           {IdSet{0, 1, 2, 3}, "x,host-nodes=0-3"},
           {IdSet{0, 2}, "x,host-nodes=0,host-nodes=2"},
           {IdSet{0, 2, 3, 7}, "x,host-nodes=0,host-nodes=2-3,host-nodes=7"},
           {IdSet{}, "x"}}) {
    KeyValueBuilder kv("x");
    kv.AddList("host-nodes", c.ids);
    EXPECT_EQ(kv.str(), c.out) << c.ids.ToString();
  }
}

TEST(KeyValueBuilder, WithoutHeadStartsWithTheFirstKey) {
  KeyValueBuilder kv;
  kv.Add("guest", "a,b").AddBool("debug-threads", true);
  EXPECT_EQ(kv.str(), "guest=a,,b,debug-threads=on");
}

TEST(QemuOptsPairs, ReadsLikeQemu) {
  // The test helper itself, on strings whose reading QEMU documents.
  EXPECT_EQ(QemuOptsPairs("pc,accel=kvm,usb"), (Pairs{{"", "pc"}, {"accel", "kvm"}, {"usb", "on"}}));
  EXPECT_EQ(QemuOptsPairs("file,,x=y,path=/a,,b"), (Pairs{{"", "file,x=y"}, {"path", "/a,b"}}));
  EXPECT_EQ(QemuOptsPairs("a=b,c=d", /*implied_first=*/true), (Pairs{{"a", "b"}, {"c", "d"}}));
}

}  // namespace
}  // namespace qlaunch::qemu
