#include "qemu_cmd/chardev_plan.h"

#include <gtest/gtest.h>

#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

TEST(RenderCharDevs, Types) {
  auto d = testing::MakeDomain();
  d.devices.chardevs = {
      testing::CharDevOf("serial", "pty", "", "isa-serial", 1),
      testing::CharDevOf("serial", "null", "", "isa-serial", 2),
      testing::CharDevOf("serial", "unix", "/run/a,b.sock", "isa-serial", 3),
      testing::CharDevOf("console", "pty", "", "serial", 4),       // the same device as serial0: skipped
      testing::CharDevOf("console", "stdio", "", "virtio", 5),
  };
  std::vector<std::string> argv;
  RenderCharDevs(d, PlanOptions{}, &argv);
  std::vector<std::string> want = {
      "-chardev", "pty,id=charserial0", "-serial", "chardev:charserial0",
      "-chardev", "null,id=charserial1", "-serial", "chardev:charserial1",
      "-chardev", "socket,id=charserial2,path=/run/a,,b.sock,server=on,wait=off", "-serial", "chardev:charserial2",
      "-chardev", "stdio,id=charconsole0",
      "-device", "virtio-serial-pci,id=virtio-serial0",
      "-device", "virtconsole,chardev=charconsole0,id=console0",
  };
  EXPECT_EQ(argv, want);
}

TEST(RenderCharDevs, ConsoleAloneIsTheSerialPort) {
  auto d = testing::MakeDomain();
  d.devices.chardevs = {testing::CharDevOf("console", "file", "/var/log/c.log", "serial", 1)};
  std::vector<std::string> argv;
  RenderCharDevs(d, PlanOptions{}, &argv);
  EXPECT_EQ(argv, (std::vector<std::string>{"-chardev", "file,id=charserial0,path=/var/log/c.log", "-serial",
                                            "chardev:charserial0"}));
}

}  // namespace
}  // namespace qlaunch::qemu
