#include "qemu_cmd/render_argv.h"

#include <gtest/gtest.h>

#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

TEST(RenderSmp, TopologyAndHotplugVcpus) {
  auto d = testing::MakeDomain();
  d.vcpu.count = 4;
  EXPECT_EQ(RenderSmp(d, testing::Caps52()), "4,sockets=4,cores=1,threads=1");  // libvirt's default shape
  d.vcpu.current = 2;
  EXPECT_EQ(RenderSmp(d, testing::Caps52()), "2,maxcpus=4,sockets=4,cores=1,threads=1");
  d.vcpu.current = 4;  // current == count: nothing to hot-plug
  EXPECT_EQ(RenderSmp(d, testing::Caps52()), "4,sockets=4,cores=1,threads=1");
  d.vcpu.count = 16;
  d.vcpu.current.reset();
  d.cpu.topology = domain::CpuTopology{2, 1, 1, 4, 2, 9};
  EXPECT_EQ(RenderSmp(d, testing::Caps52()), "16,sockets=2,dies=1,cores=4,threads=2");
}

// <vcpus> (the live XML after setvcpus): -smp starts only the boot vCPUs; the plugged ones come
// by device_add before cont (PlanLaunch's plug_vcpus_to).
TEST(RenderSmp, PluggedVcpusAreNotBootVcpus) {
  auto d = testing::MakeDomain();
  d.vcpu.count = 4;
  d.vcpu.current = 3;
  for (unsigned id = 0; id < 4; ++id) d.vcpu.states.push_back({id, id < 3, id >= 2, id < 3 ? id + 1 : 0, 0});
  EXPECT_EQ(RenderSmp(d, testing::Caps72()), "2,maxcpus=4,sockets=4,cores=1,threads=1");
  d.vcpu.current.reset();  // all four run, two plugged
  d.vcpu.states[3].enabled = true;
  EXPECT_EQ(RenderSmp(d, testing::Caps72()), "2,maxcpus=4,sockets=4,cores=1,threads=1");
}

TEST(RenderSmp, ClustersNeedQemu7) {
  auto d = testing::MakeDomain();
  d.vcpu.count = 8;
  d.cpu.topology = domain::CpuTopology{1, 1, 2, 2, 2, 9};
  EXPECT_EQ(RenderSmp(d, testing::Caps72()), "8,sockets=1,dies=1,clusters=2,cores=2,threads=2");
  EXPECT_THROW(RenderSmp(d, testing::Caps52()), DiagnosticError);
}

}  // namespace
}  // namespace qlaunch::qemu
