// qlaunch start / list / destroy on a real QEMU 5.2 (no thread-context): with --prealloc auto
// the shared memfd backends are populated by qlaunch and handed to QEMU by fd.
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

class LaunchQemu52Test : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu52, "5.2"); !why.empty())
      GTEST_SKIP() << why << "; install it with: sudo scripts/install-old-qemu";
  }
};

TEST_F(LaunchQemu52Test, AutoUsesTheLauncherForSharedMemfds) {
  StartListDestroy(kQemu52, {}, "launcher");
}

TEST_F(LaunchQemu52Test, QemuPreallocatesWhenAsked) {
  StartListDestroy(kQemu52, {"--prealloc", "qemu"}, "qemu");
}

}  // namespace
}  // namespace qlaunch::testing
