// What goes into a domain's cpuset cgroup, from the domain and its plan.
#include "launcher/host/cgroup.h"

#include <gtest/gtest.h>

#include "domain/parser.h"

namespace qlaunch::launcher {
namespace {

domain::DomainDef Parse(const std::string& inner) {
  return domain::ParseDomainXml("<domain type='qemu'><name>c</name><memory unit='MiB'>64</memory><vcpu>2</vcpu>" +
                                    inner + "</domain>",
                                "c.xml");
}

qemu::LaunchPlan PlanWith(IdSet context_cpus, IdSet backend_nodes) {
  qemu::LaunchPlan plan;
  if (!context_cpus.Empty()) plan.contexts.push_back({"tc-0", IdSet{0}, context_cpus});
  qemu::MemoryBackend b;
  b.host_nodes = backend_nodes;
  plan.backends.push_back(b);
  return plan;
}

TEST(CgroupCpuset, TableOfDomainsAndPlans) {
  struct Case {
    const char* name;
    std::string xml;
    qemu::LaunchPlan plan;
    std::string cpus, mems;
  } cases[] = {
      {"nothing pinned: unrestricted", "", PlanWith(IdSet{0, 1}, IdSet{0}), "", ""},
      {"emulatorpin and vcpupins, plus the contexts' CPUs",
       "<cputune><emulatorpin cpuset='0'/><vcpupin vcpu='0' cpuset='2'/><vcpupin vcpu='1' cpuset='3'/></cputune>",
       PlanWith(IdSet{4, 5}, {}), "0,2-5", ""},
      {"numatune nodeset plus memnodes and backends' nodes",
       "<cpu><numa><cell id='0' cpus='0-1' memory='64' unit='MiB'/></numa></cpu>"
       "<numatune><memory mode='strict' nodeset='1'/><memnode cellid='0' mode='strict' nodeset='2'/></numatune>",
       PlanWith({}, IdSet{3}), "", "1-3"},
      {"memnodes without a domain-wide nodeset: unrestricted",
       "<cpu><numa><cell id='0' cpus='0-1' memory='64' unit='MiB'/></numa></cpu>"
       "<numatune><memnode cellid='0' mode='strict' nodeset='2'/></numatune>",
       PlanWith({}, IdSet{2}), "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CgroupCpuset got = PlanCgroupCpuset(Parse(c.xml), c.plan);
    EXPECT_EQ(got.cpus.ToString(), c.cpus);
    EXPECT_EQ(got.mems.ToString(), c.mems);
  }
}

}  // namespace
}  // namespace qlaunch::launcher
