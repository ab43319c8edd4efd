#include "numa/libnuma_check.h"

#include <gtest/gtest.h>
#include <numa.h>

#include "numa/test_hosts.h"

namespace qlaunch::numa {
namespace {

HostTopology TwoNode() { return testing::ReadFixture("two-node"); }

// A libnuma view that agrees with the two-node fixture.
LibnumaView AgreeingView() {
  LibnumaView v;
  v.available = true;
  v.max_node = 1;
  v.distances = {{{0, 0}, 10}, {{0, 1}, 21}, {{1, 0}, 21}, {{1, 1}, 10}};
  for (unsigned cpu = 0; cpu < 8; ++cpu) v.node_of_cpu[cpu] = cpu < 4 ? 0 : 1;
  return v;
}

std::string Joined(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const auto& d : diags) s += d.ToString() + "\n";
  return s;
}

TEST(LibnumaCheck, AgreementGivesNoWarnings) {
  EXPECT_EQ(Joined(CompareWithLibnuma(TwoNode(), AgreeingView())), "");
}

TEST(LibnumaCheck, ReportsEachDisagreement) {
  LibnumaView v = AgreeingView();
  v.max_node = 3;
  v.distances[{1, 0}] = 20;
  v.node_of_cpu[5] = 0;
  auto diags = CompareWithLibnuma(TwoNode(), v);
  ASSERT_EQ(diags.size(), 3u) << Joined(diags);
  for (const auto& d : diags) EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_EQ(diags[0].message, "libnuma cross-check: numa_max_node() is 3, sysfs's highest node is 1");
  EXPECT_EQ(diags[1].message, "libnuma cross-check: numa_distance(1, 0) is 20, sysfs says 21");
  EXPECT_EQ(diags[2].message, "libnuma cross-check: numa_node_of_cpu(5) is 0, sysfs puts it on node 1");
}

TEST(LibnumaCheck, UnavailableLibnumaIsOneWarning) {
  auto diags = CompareWithLibnuma(TwoNode(), LibnumaView{});
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("numa_available() failed"), std::string::npos) << diags[0].message;
}

TEST(LibnumaCheck, ALibnumaThatCannotBeLoadedIsOneWarningSayingWhy) {
  LibnumaView v = AgreeingView();
  v.load_error = "libnuma.so.1: cannot open shared object file: No such file or directory";
  auto diags = CompareWithLibnuma(TwoNode(), v);
  ASSERT_EQ(diags.size(), 1u) << Joined(diags);
  EXPECT_EQ(diags[0].severity, Severity::kWarning);
  EXPECT_EQ(diags[0].message,
            "libnuma cross-check: not made: libnuma.so.1: cannot open shared object file: No such file or "
            "directory (Debian's package libnuma1 has it)");
}

TEST(LibnumaCheck, UnknownSysfsDistancesAreNotCompared) {
  HostTopology t = TwoNode();
  for (auto& n : t.nodes) n.distances.clear();
  LibnumaView v = AgreeingView();
  v.distances.clear();
  EXPECT_EQ(Joined(CompareWithLibnuma(t, v)), "");
}

TEST(LibnumaCheck, LiveLibnumaAgreesWithRealSysfs) {
  if (numa_available() < 0) GTEST_SKIP() << "libnuma: NUMA syscalls unavailable here";
  HostTopology t = ReadHostTopology();
  LibnumaView v = QueryLibnuma(t);  // through dlopen: the same library this test links
  EXPECT_EQ(v.load_error, "");
  EXPECT_TRUE(v.available);
  EXPECT_EQ(v.max_node, static_cast<int>(t.NodeIds().Max()));
  EXPECT_EQ(v.distances.size(), t.nodes.size() * t.nodes.size());
  EXPECT_EQ((v.distances.at({t.nodes[0].id, t.nodes[0].id})), 10);
  EXPECT_EQ(Joined(t.warnings), "");
}

}  // namespace
}  // namespace qlaunch::numa
