// qlaunch start / list / destroy on the system's real QEMU 7.2, as root, with real hugepages.
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

class LaunchQemu72Test : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(LaunchQemu72Test, QemuPreallocatesWithThreadContexts) {
  StartListDestroy(kQemu72, {"--prealloc", "qemu"}, "qemu");
}

// --prealloc auto on 7.2: shared hugetlb memfds go to qlaunch's preallocator (docs/planner.md).
TEST_F(LaunchQemu72Test, AutoPicksTheLauncherForSharedHugetlbMemfds) {
  StartListDestroy(kQemu72, {}, "launcher");
}

TEST_F(LaunchQemu72Test, LauncherPreallocatesSharedMemfds) {
  StartListDestroy(kQemu72, {"--prealloc", "launcher"}, "launcher");
}

}  // namespace
}  // namespace qlaunch::testing
