// Backend options as the QMP commands that make them at run time, and device_add.
#include "qemu_cmd/hotplug_qmp.h"

#include <gtest/gtest.h>

namespace qlaunch::qemu {
namespace {

using nlohmann::json;
using KV = std::vector<std::pair<std::string, std::string>>;

TEST(SplitKeyValues, QemusSyntax) {
  EXPECT_EQ(SplitKeyValues("tap,fd=3,id=hostnet1"), (KV{{"", "tap"}, {"fd", "3"}, {"id", "hostnet1"}}));
  EXPECT_EQ(SplitKeyValues("file,id=c,path=/a,,b=c"), (KV{{"", "file"}, {"id", "c"}, {"path", "/a,b=c"}}));
  EXPECT_EQ(SplitKeyValues(""), KV{});
}

TEST(BackendCallsOf, EachBackendAndItsRemoval) {
  BackendCalls b = BackendCallsOf({"-blockdev", R"({"driver":"file","filename":"/a,b","node-name":"libvirt-3-storage"})"}, "");
  EXPECT_EQ(b.add.execute, "blockdev-add");
  EXPECT_EQ(b.add.arguments["filename"], "/a,b");
  EXPECT_EQ(b.remove.execute, "blockdev-del");
  EXPECT_EQ(b.remove.arguments, json({{"node-name", "libvirt-3-storage"}}));

  b = BackendCallsOf({"-netdev", "tap,fd=1000000,id=hostnet2,vhost=on"}, "hostnet2-fd");
  EXPECT_EQ(b.add.arguments, json({{"type", "tap"}, {"fd", "hostnet2-fd"}, {"id", "hostnet2"}, {"vhost", true}}));
  EXPECT_EQ(b.remove.execute, "netdev_del");
  EXPECT_EQ(b.remove.arguments, json({{"id", "hostnet2"}}));

  b = BackendCallsOf({"-chardev", "socket,id=charchannel1,fd=1000000,server=on,wait=off"}, "s-fd");
  EXPECT_EQ(b.add.arguments,
            json({{"id", "charchannel1"},
                  {"backend",
                   {{"type", "socket"},
                    {"data", {{"addr", {{"type", "fd"}, {"data", {{"str", "s-fd"}}}}}, {"server", true}, {"wait", false}}}}}}));
  EXPECT_EQ(b.remove.execute, "chardev-remove");
  b = BackendCallsOf({"-chardev", "socket,id=c,path=/run/x.sock"}, "");
  EXPECT_EQ(b.add.arguments["backend"]["data"]["addr"], json({{"type", "unix"}, {"data", {{"path", "/run/x.sock"}}}}));
  b = BackendCallsOf({"-chardev", "pty,id=charserial1"}, "");
  EXPECT_EQ(b.add.arguments["backend"], json({{"type", "pty"}, {"data", json::object()}}));
  b = BackendCallsOf({"-chardev", "file,id=f,path=/l,append=on"}, "");
  EXPECT_EQ(b.add.arguments["backend"]["data"], json({{"out", "/l"}, {"append", true}}));

  b = BackendCallsOf({"-object", R"({"qom-type":"rng-random","id":"objrng0","filename":"/dev/urandom"})"}, "");
  EXPECT_EQ(b.add.execute, "object-add");
  EXPECT_EQ(b.remove.arguments, json({{"id", "objrng0"}}));
  b = BackendCallsOf({"-object", "rng-random,id=objrng1,filename=/dev/random"}, "");
  EXPECT_EQ(b.add.arguments, json({{"qom-type", "rng-random"}, {"id", "objrng1"}, {"filename", "/dev/random"}}));

  EXPECT_THROW(BackendCallsOf({"-chardev", "stdio,id=x"}, ""), std::invalid_argument);
  EXPECT_THROW(BackendCallsOf({"-vnc", "0.0.0.0:0"}, ""), std::invalid_argument);
}

TEST(DeviceAddOf, PropertiesAsOnTheCommandLine) {
  PlannedDevice d;
  d.driver = "virtio-net-pci";
  d.id = "net1";
  d.props = {{"netdev", "hostnet1"}, {"mac", "52:54:00:01:02:03"}, {"bootindex", "2"}};
  d.slot = PciSlot{"pci.3", 0, 0, false};
  EXPECT_EQ(DeviceAddOf(d).arguments, json({{"driver", "virtio-net-pci"}, {"id", "net1"}, {"netdev", "hostnet1"},
                                            {"mac", "52:54:00:01:02:03"}, {"bootindex", "2"}, {"bus", "pci.3"},
                                            {"addr", "0x0"}}));
  d.slot = PciSlot{"pci.0", 0x1f, 3, true};
  EXPECT_EQ(DeviceAddOf(d).arguments["addr"], "0x1f.0x3");
  EXPECT_EQ(DeviceAddOf(d).arguments["multifunction"], "on");
  EXPECT_EQ(DeviceDelOf("net1").arguments, json({{"id", "net1"}}));
}

}  // namespace
}  // namespace qlaunch::qemu
