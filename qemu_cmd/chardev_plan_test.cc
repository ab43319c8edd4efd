// The chardev family's argv as libvirt 9.0 renders it (each case checked with
// `virsh domxml-to-native qemu-argv`; libvirt writes -device as JSON, qlaunch as key=value).
#include "qemu_cmd/chardev_plan.h"

#include <gtest/gtest.h>

#include "qemu_cmd/plan_diagnostic.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using domain::CharDev;

CharDev Chr(std::string kind, std::string type, std::string target_type = "") {
  CharDev c;
  c.kind = std::move(kind);
  c.type = std::move(type);
  c.target_type = target_type.empty() ? (c.kind == "serial" ? "isa-serial" : c.kind == "console" ? "serial" : "virtio")
                                      : target_type;
  c.line = 7;
  return c;
}

CharDev Unix(std::string kind, std::string mode, std::string path, std::string name = "") {
  CharDev c = Chr(std::move(kind), "unix");
  c.mode = std::move(mode);
  c.path = std::move(path);
  c.target_name = std::move(name);
  return c;
}

std::vector<std::string> Argv(const domain::DomainDef& d, const PlanOptions& opts = {}) {
  QemuCaps caps = testing::Caps72();
  DeviceContext ctx{&d, &caps, &opts, false};
  std::vector<PlannedDevice> devs;
  PlanCharDevices(ctx, &devs);
  for (const PlannedDevice& p : devs) EXPECT_EQ(p.family, "chardev");
  return RenderDevicePlan(devs);
}

PlanOptions Opts() {
  PlanOptions o;
  o.qmp_socket = "/run/qlaunch/vm1/qmp.sock";
  return o;
}

struct Case {
  const char* what;
  std::vector<CharDev> chrs;
  std::vector<std::string> want;
};

TEST(PlanCharDevices, AsLibvirt) {
  CharDev file = Chr("serial", "file");
  file.path = "/tmp/x,y.log";
  file.append = true;
  CharDev tcp_bind = Chr("serial", "tcp");
  tcp_bind.mode = "bind", tcp_bind.host = "127.0.0.1", tcp_bind.service = "4555", tcp_bind.protocol = "telnet";
  CharDev tcp_connect = Chr("serial", "tcp");
  tcp_connect.mode = "connect", tcp_connect.host = "10.0.0.1", tcp_connect.service = "99", tcp_connect.protocol = "raw";
  CharDev port3 = Chr("serial", "pty");
  port3.target_port = 3;
  CharDev explicit5 = Unix("channel", "connect", "/tmp/c.sock", "x.y");
  explicit5.address.type = "virtio-serial";
  explicit5.address.port = 5;
  CharDev spice = Chr("channel", "spicevmc");
  spice.target_name = "com.redhat.spice.0";

  const std::vector<Case> cases = {
      {"a pty serial and its console: one port",
       {Chr("serial", "pty"), Chr("console", "pty")},
       {"-chardev", "pty,id=charserial0", "-device", "isa-serial,id=serial0,chardev=charserial0,index=0"}},
      {"a lone serial console is serial0",
       {Chr("console", "pty")},
       {"-chardev", "pty,id=charserial0", "-device", "isa-serial,id=serial0,chardev=charserial0,index=0"}},
      {"file (append), unix connect, tcp bind telnet, tcp connect, null",
       {file, Unix("serial", "connect", "/tmp/a.sock"), tcp_bind, tcp_connect, Chr("serial", "null")},
       {"-chardev", "file,id=charserial0,path=/tmp/x,,y.log,append=on",
        "-device", "isa-serial,id=serial0,chardev=charserial0,index=0",
        "-chardev", "socket,id=charserial1,path=/tmp/a.sock",
        "-device", "isa-serial,id=serial1,chardev=charserial1,index=1",
        "-chardev", "socket,id=charserial2,host=127.0.0.1,port=4555,telnet=on,server=on,wait=off",
        "-device", "isa-serial,id=serial2,chardev=charserial2,index=2",
        "-chardev", "socket,id=charserial3,host=10.0.0.1,port=99",
        "-device", "isa-serial,id=serial3,chardev=charserial3,index=3",
        "-chardev", "null,id=charserial4",
        "-device", "isa-serial,id=serial4,chardev=charserial4,index=4"}},
      {"ports without <target port> follow the highest one",
       {Chr("serial", "stdio"), port3, Chr("serial", "pty")},
       {"-chardev", "stdio,id=charserial0", "-device", "isa-serial,id=serial0,chardev=charserial0,index=4",
        "-chardev", "pty,id=charserial1", "-device", "isa-serial,id=serial1,chardev=charserial1,index=3",
        "-chardev", "pty,id=charserial2", "-device", "isa-serial,id=serial2,chardev=charserial2,index=5"}},
      {"channels before consoles; ports from 1, the XML's first",
       {Chr("console", "pty", "virtio"), Chr("console", "null", "virtio"), spice,
        Unix("channel", "bind", "/tmp/ga.sock", "org.qemu.guest_agent.0"), explicit5, Chr("channel", "pty")},
       {"-chardev", "spicevmc,id=charchannel0,name=vdagent",
        "-device", "virtserialport,id=channel0,bus=virtio-serial0.0,nr=1,chardev=charchannel0,name=com.redhat.spice.0",
        "-chardev", "socket,id=charchannel1,path=/tmp/ga.sock,server=on,wait=off",
        "-device", "virtserialport,id=channel1,bus=virtio-serial0.0,nr=2,chardev=charchannel1,name=org.qemu.guest_agent.0",
        "-chardev", "socket,id=charchannel2,path=/tmp/c.sock",
        "-device", "virtserialport,id=channel2,bus=virtio-serial0.0,nr=5,chardev=charchannel2,name=x.y",
        "-chardev", "pty,id=charchannel3",
        "-device", "virtserialport,id=channel3,bus=virtio-serial0.0,nr=3,chardev=charchannel3",
        "-chardev", "pty,id=charconsole0", "-device", "virtconsole,id=console0,chardev=charconsole0",
        "-chardev", "null,id=charconsole1", "-device", "virtconsole,id=console1,chardev=charconsole1"}},
      {"with an ISA serial port, libvirt's stub console 0 shifts the virtio consoles",
       {Chr("serial", "null"), Chr("console", "pty", "virtio")},
       {"-chardev", "null,id=charserial0", "-device", "isa-serial,id=serial0,chardev=charserial0,index=0",
        "-chardev", "pty,id=charconsole1", "-device", "virtconsole,id=console1,chardev=charconsole1"}},
      {"not with a PCI one",
       {Chr("serial", "null", "pci-serial"), Chr("console", "pty", "virtio")},
       {"-chardev", "null,id=charserial0", "-device", "pci-serial,id=serial0,chardev=charserial0",
        "-chardev", "pty,id=charconsole0", "-device", "virtconsole,id=console0,chardev=charconsole0"}},
      {"the agent channel without a path: under the state dir (libvirt: its channel/target dir)",
       {Unix("channel", "bind", "", "org.qemu.guest_agent.0"), Unix("channel", "bind", "")},
       {"-chardev", "socket,id=charchannel0,path=/run/qlaunch/vm1/channel/org.qemu.guest_agent.0,server=on,wait=off",
        "-device", "virtserialport,id=channel0,bus=virtio-serial0.0,nr=1,chardev=charchannel0,name=org.qemu.guest_agent.0",
        "-chardev", "socket,id=charchannel1,path=/run/qlaunch/vm1/channel/vioser-00-00-02.sock,server=on,wait=off",
        "-device", "virtserialport,id=channel1,bus=virtio-serial0.0,nr=2,chardev=charchannel1"}},
  };
  for (const Case& c : cases) {
    auto d = testing::MakeDomain();
    d.devices.chardevs = c.chrs;
    if (c.chrs.size() > 2 && c.chrs[2].type == "spicevmc") d.devices.graphics.emplace_back().type = "spice";
    EXPECT_EQ(Argv(d, Opts()), c.want) << c.what;
  }
}

TEST(PlanCharDevices, PciSerialIsAPciDevice) {
  auto d = testing::MakeDomain();
  d.devices.chardevs = {Chr("serial", "pty", "pci-serial")};
  d.devices.chardevs[0].address.type = "pci";
  d.devices.chardevs[0].address.slot = 4;
  PlanOptions opts = Opts();
  QemuCaps caps = testing::Caps72();
  DeviceContext ctx{&d, &caps, &opts, false};
  std::vector<PlannedDevice> devs;
  PlanCharDevices(ctx, &devs);
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].driver, "pci-serial");
  EXPECT_TRUE(devs[0].pci);
  EXPECT_EQ(devs[0].address.slot, 4u);
  EXPECT_EQ(devs[0].props, (std::vector<std::pair<std::string, std::string>>{{"chardev", "charserial0"}}));
}

TEST(PlanCharDevices, HandedOverSocketIsAnFd) {
  auto d = testing::MakeDomain();
  d.devices.chardevs = {Unix("channel", "bind", "", "org.qemu.guest_agent.0"), Unix("serial", "bind", "/tmp/s.sock")};
  PlanOptions opts = Opts();
  opts.devices.chardev_fds = {{0, 21}, {1, 22}};
  opts.devices.channel_dir = "/elsewhere";
  auto argv = Argv(d, opts);
  EXPECT_EQ(argv[1], "socket,id=charserial0,fd=22,server=on,wait=off");
  EXPECT_EQ(argv[5], "socket,id=charchannel0,fd=21,server=on,wait=off");
  auto sockets = ChardevListenSockets(d, ChannelDir(opts));
  ASSERT_EQ(sockets.size(), 2u);
  EXPECT_EQ(sockets[0].path, "/elsewhere/org.qemu.guest_agent.0");
  EXPECT_TRUE(sockets[0].in_channel_dir);
  EXPECT_EQ(sockets[1].path, "/tmp/s.sock");
  EXPECT_FALSE(sockets[1].in_channel_dir);
}

TEST(PlanCharDevices, Errors) {
  auto plan = [](std::vector<CharDev> chrs) {
    auto d = testing::MakeDomain();
    d.devices.chardevs = std::move(chrs);
    Argv(d, Opts());
  };
  CharDev p1 = Chr("serial", "pty"), p2 = Chr("serial", "pty");
  p1.target_port = p2.target_port = 1;
  CharDev a = Chr("channel", "pty"), b = Chr("channel", "pty");
  a.address.type = b.address.type = "virtio-serial";
  a.address.port = b.address.port = 2;
  const std::vector<std::vector<CharDev>> bad = {
      {Chr("channel", "spicevmc")},  // no spice graphics
      {p1, p2},
      {a, b},
      {Unix("channel", "bind", "", "../../etc/x")},
      {Unix("channel", "bind", "", "..")},
      {Unix("channel", "bind", "", "same"), Unix("channel", "bind", "", "same")},
      {Chr("console", "pty", "virtio"), Chr("console", "pty", "serial")},
  };
  for (const auto& chrs : bad) EXPECT_THROW(plan(chrs), DiagnosticError) << chrs.size() << " " << chrs[0].type;
}

}  // namespace
}  // namespace qlaunch::qemu
