#include "numa/host_json.h"

#include <gtest/gtest.h>

#include "numa/test_hosts.h"

namespace qlaunch::numa {
namespace {

using nlohmann::json;

TEST(HostJson, TwoNodeShape) {
  json j = HostToJson(testing::ReadFixture("two-node"));
  const json expected_node1 = json::parse(R"({
    "id": 1,
    "cpus": [4, 5, 6, 7],
    "memory_bytes": 16908640256,
    "distances": {"0": 21, "1": 10},
    "hugepages": {"2097152": {"total": 1024, "free": 1024}, "1073741824": {"total": 4, "free": 2}}
  })");
  ASSERT_TRUE(j["nodes"].is_array());
  ASSERT_EQ(j["nodes"].size(), 2u);
  EXPECT_EQ(j["nodes"][1], expected_node1) << j["nodes"][1].dump(2);
  EXPECT_EQ(j["nodes"][0]["cpus"], json::parse("[0, 1, 2, 3]"));
  EXPECT_EQ(j["nodes"][0]["hugepages"]["2097152"]["free"], 1000);

  std::vector<std::string> keys;
  for (auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"default_hugepage_bytes", "hugepage_sizes", "hugetlbfs_mounts",
                                            "nodes", "usable_cpus"}));
  EXPECT_EQ(j["usable_cpus"], json::parse("[0, 1, 2, 3, 4, 5, 6, 7]"));
  EXPECT_EQ(j["hugepage_sizes"], json::parse("[2097152, 1073741824]"));
  EXPECT_EQ(j["default_hugepage_bytes"], 2097152);
  EXPECT_EQ(j["hugetlbfs_mounts"], json::parse(R"({"2097152": "/dev/hugepages", "1073741824": "/dev/hugepages1G"})"));
}

TEST(HostJson, UnknownFieldsStayEmptyObjects) {
  HostTopology t;
  t.nodes = {testing::MakeNode(3)};
  json j = HostToJson(t);
  EXPECT_EQ(j.dump(),
            R"({"default_hugepage_bytes":0,"hugepage_sizes":[],"hugetlbfs_mounts":{},)"
            R"("nodes":[{"cpus":[],"distances":{},"hugepages":{},"id":3,"memory_bytes":0}],"usable_cpus":[]})");
}

}  // namespace
}  // namespace qlaunch::numa
