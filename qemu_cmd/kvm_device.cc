#include "qemu_cmd/kvm_device.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace qlaunch::qemu {

std::filesystem::path KvmDevicePath() {
  const char* dev = std::getenv("QLAUNCH_KVM_DEVICE");
  return dev && *dev ? dev : "/dev/kvm";
}

bool KvmUsable(std::string* why, const std::filesystem::path& dev) {
  int fd = ::open(dev.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (why) *why = "cannot open " + dev.string() + ": " + std::strerror(errno);
    return false;
  }
  int version = ::ioctl(fd, KVM_GET_API_VERSION, 0);
  ::close(fd);
  if (version != KVM_API_VERSION) {
    if (why) *why = dev.string() + " reports KVM API version " + std::to_string(version) + ", not " +
                    std::to_string(KVM_API_VERSION);
    return false;
  }
  return true;
}

}  // namespace qlaunch::qemu
