#include "qemu_cmd/kvm_device.h"

#include <gtest/gtest.h>

namespace qlaunch::qemu {
namespace {

TEST(KvmUsable, AMissingDeviceIsNotUsableAndSaysWhy) {
  std::string why;
  EXPECT_FALSE(KvmUsable(&why, "/nonexistent/kvm"));
  EXPECT_NE(why.find("cannot open /nonexistent/kvm"), std::string::npos) << why;
}

TEST(KvmUsable, ANonKvmDeviceIsNotUsable) {
  std::string why;
  // /dev/null opens read-write but answers the ioctl with an error, not version 12.
  EXPECT_FALSE(KvmUsable(&why, "/dev/null"));
  EXPECT_NE(why.find("/dev/null reports KVM API version -1"), std::string::npos) << why;
}

}  // namespace
}  // namespace qlaunch::qemu
