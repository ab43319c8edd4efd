// The graphics family as libvirt 9.0 renders it (each expectation from `virsh domxml-to-native`
// for the same XML, bus/addr of PCI devices aside: AssignPciAddresses places those).
#include "qemu_cmd/graphics_plan.h"

#include <gtest/gtest.h>

#include "qemu_cmd/launch_plan.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

domain::Graphics Gfx(std::string type, std::optional<int> port, bool autoport, std::string listen = "", int line = 30) {
  domain::Graphics g;
  g.type = std::move(type);
  g.port = port;
  g.autoport = autoport;
  g.listen = std::move(listen);
  g.line = line;
  return g;
}

domain::Video Vid(std::string model, bool primary = false, std::optional<unsigned> heads = std::nullopt) {
  domain::Video v;
  v.model = std::move(model);
  v.primary = primary;
  v.heads = heads;
  v.line = 40;
  return v;
}

domain::Input In(std::string type, std::string bus, std::string port = "") {
  domain::Input i;
  i.type = std::move(type);
  i.bus = std::move(bus);
  if (!port.empty()) {
    i.address.type = "usb";
    i.address.drive_bus = 0;
    i.address.usb_port = port;
  }
  i.line = 50;
  return i;
}

domain::Controller Usb(std::string model, std::optional<unsigned> ports = std::nullopt, unsigned index = 0) {
  domain::Controller c;
  c.type = "usb";
  c.model = std::move(model);
  c.ports = ports;
  c.index = index;
  return c;
}

struct Planned {
  std::vector<std::string> argv;
  std::vector<PlannedDevice> devices;
};

Planned Plan(const domain::DomainDef& def, bool q35 = false, DeviceResources res = {}) {
  QemuCaps caps = testing::Caps72();
  PlanOptions opts;
  opts.devices = std::move(res);
  DeviceContext ctx{&def, &caps, &opts, q35};
  Planned p;
  PlanGraphicsDevices(ctx, &p.devices);
  p.argv = RenderDevicePlan(p.devices);
  return p;
}

std::vector<std::string> Argv(const domain::DomainDef& def, bool q35 = false, DeviceResources res = {}) {
  return Plan(def, q35, std::move(res)).argv;
}

int ErrorLine(const domain::DomainDef& def, bool q35 = false) {
  try {
    Plan(def, q35);
  } catch (const DiagnosticError& e) {
    return e.diagnostics().at(0).line;
  }
  ADD_FAILURE() << "expected a planning error";
  return -1;
}

TEST(PlanGraphics, NothingWithoutDevices) { EXPECT_TRUE(Argv(testing::MakeDomain()).empty()); }

TEST(PlanGraphics, VncAsLibvirtRendersIt) {
  struct Case {
    domain::Graphics g;
    DeviceResources res;
    std::string vnc;
  };
  DeviceResources picked;
  picked.graphics_ports[0] = 5907;
  domain::Graphics none = Gfx("vnc", std::nullopt, true);
  none.listen_none = true;
  for (const Case& c : {
           Case{Gfx("vnc", std::nullopt, true), {}, "127.0.0.1:0,audiodev=audio1"},  // domxml-to-native
           Case{Gfx("vnc", std::nullopt, true), picked, "127.0.0.1:7,audiodev=audio1"},
           Case{Gfx("vnc", 5905, false), {}, "127.0.0.1:5,audiodev=audio1"},
           Case{Gfx("vnc", 5905, false, "0.0.0.0"), {}, "0.0.0.0:5,audiodev=audio1"},
           Case{Gfx("vnc", 6000, false, "::1"), {}, "[::1]:100,audiodev=audio1"},
           Case{none, {}, "none,audiodev=audio1"},
           // a comma in the address cannot add options
           Case{Gfx("vnc", 5900, false, "1.2.3.4,password=off"), {}, "1.2.3.4,,password=off:0,audiodev=audio1"},
       }) {
    auto d = testing::MakeDomain();
    d.devices.graphics = {c.g};
    std::vector<std::string> want = {"-audiodev", R"({"id":"audio1","driver":"none"})", "-vnc", c.vnc,
                                     "-device", "cirrus-vga,id=video0"};
    EXPECT_EQ(Argv(d, false, c.res), want);
  }
}

TEST(PlanGraphics, SpiceAsLibvirtRendersIt) {
  struct Case {
    domain::Graphics g;
    std::string spice;
  };
  domain::Graphics none = Gfx("spice", 5930, false);
  none.listen_none = true;
  domain::Graphics image = Gfx("spice", std::nullopt, true);
  image.image_compression = "off";  // virt-install's <image compression='off'/>
  for (const Case& c : {
           Case{image, "port=5901,addr=127.0.0.1,disable-ticketing=on,image-compression=off,seamless-migration=on"},
           Case{Gfx("spice", std::nullopt, true), "port=5901,addr=127.0.0.1,disable-ticketing=on,seamless-migration=on"},
           Case{Gfx("spice", 5899, false, "0.0.0.0"), "port=5899,addr=0.0.0.0,disable-ticketing=on,seamless-migration=on"},
           Case{Gfx("spice", std::nullopt, false), "port=0,disable-ticketing=on,seamless-migration=on"},
           Case{none, "port=0,disable-ticketing=on,seamless-migration=on"},
       }) {
    auto d = testing::MakeDomain();
    d.devices.graphics = {c.g};
    std::vector<std::string> want = {"-audiodev", R"({"id":"audio1","driver":"spice"})", "-spice", c.spice,
                                     "-device", "cirrus-vga,id=video0"};
    EXPECT_EQ(Argv(d), want);
  }
}

TEST(PlanGraphics, VncAndSpiceShareTheSpiceAudio) {
  auto d = testing::MakeDomain();
  d.devices.graphics = {Gfx("vnc", std::nullopt, true), Gfx("spice", std::nullopt, true)};
  DeviceResources res;
  res.graphics_ports = {{0, 5900}, {1, 5901}};
  std::vector<std::string> want = {
      "-audiodev", R"({"id":"audio1","driver":"spice"})", "-vnc", "127.0.0.1:0,audiodev=audio1",
      "-spice", "port=5901,addr=127.0.0.1,disable-ticketing=on,seamless-migration=on",
      "-device", "cirrus-vga,id=video0"};
  EXPECT_EQ(Argv(d, false, res), want);
  d.devices.graphics.push_back(Gfx("vnc", 5999, false, "", 33));
  EXPECT_EQ(ErrorLine(d), 33);  // one of each type
}

TEST(PlanVideo, ModelsPrimaryAndSecondary) {
  struct Case {
    std::vector<domain::Video> videos;
    std::vector<std::string> devices;
  };
  domain::Video qxl = Vid("qxl");
  qxl.ram = 131072;
  qxl.vram = 32768;
  qxl.vram64 = 65536;
  qxl.vgamem = 32768;
  qxl.heads = 2;
  domain::Video vga9 = Vid("vga");
  vga9.vram = 9216;  // rounded up to 16 MiB
  domain::Video bochs = Vid("bochs");
  bochs.vram = 4096;
  for (const Case& c : {
           Case{{Vid("virtio")}, {"virtio-vga,id=video0,max_outputs=1"}},
           Case{{Vid("virtio", false, 2), Vid("virtio")},
                {"virtio-vga,id=video0,max_outputs=2", "virtio-gpu-pci,id=video1,max_outputs=1"}},
           Case{{Vid("vga")}, {"VGA,id=video0,vgamem_mb=16"}},
           Case{{vga9}, {"VGA,id=video0,vgamem_mb=16"}},
           Case{{Vid("cirrus")}, {"cirrus-vga,id=video0"}},
           Case{{bochs}, {"bochs-display,id=video0,vgamem=4194304"}},
           Case{{Vid("bochs")}, {"bochs-display,id=video0,vgamem=16777216"}},
           Case{{Vid("qxl"), Vid("qxl")},
                {"qxl-vga,id=video0,max_outputs=1,ram_size=67108864,vram_size=67108864,vram64_size_mb=0,vgamem_mb=16",
                 "qxl,id=video1,max_outputs=1,ram_size=67108864,vram_size=67108864,vram64_size_mb=0,vgamem_mb=16"}},
           Case{{qxl}, {"qxl-vga,id=video0,max_outputs=2,ram_size=134217728,vram_size=33554432,vram64_size_mb=64,"
                        "vgamem_mb=32"}},
           // primary='yes' goes first and becomes video0
           Case{{Vid("virtio"), Vid("vga", true)}, {"VGA,id=video0,vgamem_mb=16", "virtio-gpu-pci,id=video1,max_outputs=1"}},
           Case{{Vid("none")}, {}},
       }) {
    auto d = testing::MakeDomain();
    d.devices.videos = c.videos;
    Planned p = Plan(d);
    std::vector<std::string> got;
    for (size_t i = 0; i + 1 < p.argv.size(); i += 2) got.push_back(p.argv[i + 1]);
    EXPECT_EQ(got, c.devices);
    for (size_t i = 0; i < p.devices.size(); ++i) {
      EXPECT_TRUE(p.devices[i].pci);
      EXPECT_EQ(p.devices[i].rank, i == 0 ? PciRank::kPrimaryVideo : PciRank::kVideo);
    }
  }
}

TEST(PlanVideo, RefusedAsLibvirtRefuses) {
  domain::Video qxl = Vid("qxl");
  qxl.vgamem = 20000;
  domain::Video tiny = Vid("vga");
  tiny.vram = 512;
  for (const auto& videos : std::vector<std::vector<domain::Video>>{
           {Vid("virtio"), Vid("vga")},        // vga only as primary
           {Vid("virtio"), Vid("cirrus")},
           {Vid("virtio"), Vid("bochs")},
           {Vid("vga", true), Vid("qxl", true)},  // two primaries
           {Vid("none"), Vid("vga")},
           {qxl},                              // vgamem not a power of two
           {tiny},                             // under 1 MiB
       }) {
    auto d = testing::MakeDomain();
    d.devices.videos = videos;
    EXPECT_EQ(ErrorLine(d), 40);
  }
}

TEST(PlanInput, UsbPortsAsLibvirtAssignsThem) {
  auto d = testing::MakeDomain();
  d.devices.controllers = {Usb("qemu-xhci", 15)};
  d.devices.inputs = {In("mouse", "ps2"), In("keyboard", "ps2"), In("tablet", "usb"), In("keyboard", "usb"),
                      In("mouse", "usb"), In("tablet", "virtio"), In("keyboard", "virtio"), In("mouse", "virtio")};
  Planned p = Plan(d, true);
  std::vector<std::string> want = {
      "-device", "usb-tablet,id=input2,bus=usb.0,port=1", "-device", "usb-kbd,id=input3,bus=usb.0,port=2",
      "-device", "usb-mouse,id=input4,bus=usb.0,port=3",  "-device", "virtio-tablet-pci,id=input5",
      "-device", "virtio-keyboard-pci,id=input6",         "-device", "virtio-mouse-pci,id=input7"};
  EXPECT_EQ(p.argv, want);
  EXPECT_FALSE(p.devices[0].pci);
  EXPECT_TRUE(p.devices[3].pci);
  EXPECT_EQ(p.devices[3].rank, PciRank::kInput);
}

TEST(PlanInput, ExplicitPortsAreReservedFirst) {
  auto d = testing::MakeDomain();  // pc: the implicit piix3-uhci has 2 ports
  d.devices.inputs = {In("tablet", "usb", "2"), In("mouse", "usb")};
  std::vector<std::string> want = {"-device", "usb-tablet,id=input0,bus=usb.0,port=2",
                                   "-device", "usb-mouse,id=input1,bus=usb.0,port=1"};
  EXPECT_EQ(Argv(d), want);
  d.devices.inputs.push_back(In("keyboard", "usb"));  // a third device: libvirt adds a hub
  EXPECT_EQ(ErrorLine(d), 50);
  d.devices.inputs = {In("tablet", "usb", "1"), In("mouse", "usb", "1")};
  EXPECT_EQ(ErrorLine(d), 50);
}

TEST(PlanInput, UsbDisksComeFirstAndRedirdevsLast) {
  auto d = testing::MakeDomain();
  d.devices.controllers = {Usb("qemu-xhci", 15)};
  d.devices.disks = {testing::DiskOf("file", "disk", "raw", "/x", "sda", "usb", false, 10)};
  d.devices.redirdevs.resize(1);
  d.devices.redirdevs[0].type = "spicevmc";
  d.devices.inputs = {In("tablet", "usb")};
  d.devices.graphics = {Gfx("spice", std::nullopt, false)};
  Planned p = Plan(d, true);
  std::vector<std::string> want = {
      "-device", "usb-tablet,id=input0,bus=usb.0,port=2",
      "-audiodev", R"({"id":"audio1","driver":"spice"})",
      "-spice", "port=0,disable-ticketing=on,seamless-migration=on",
      "-device", "cirrus-vga,id=video0",
      "-chardev", "spicevmc,id=charredir0,name=usbredir",
      "-device", "usb-redir,id=redir0,chardev=charredir0,bus=usb.0,port=3"};
  EXPECT_EQ(p.argv, want);
}

TEST(PlanInput, CompanionControllersAndSecondBus) {
  auto d = testing::MakeDomain();
  d.devices.controllers = {Usb("ich9-ehci1"), Usb("ich9-uhci1"), Usb("piix3-uhci", std::nullopt, 1)};
  d.devices.inputs = {In("tablet", "usb"), In("tablet", "usb", "2")};
  d.devices.inputs[1].address.drive_bus = 1;
  std::vector<std::string> want = {"-device", "usb-tablet,id=input0,bus=usb.0,port=1",
                                   "-device", "usb-tablet,id=input1,bus=usb1.0,port=2"};
  EXPECT_EQ(Argv(d), want);
}

TEST(PlanInput, UsbDisabled) {
  auto d = testing::MakeDomain();
  d.devices.controllers = {Usb("none")};
  d.devices.inputs = {In("tablet", "usb")};
  EXPECT_EQ(ErrorLine(d), 50);
  d.devices.inputs = {In("mouse", "ps2")};
  EXPECT_TRUE(Argv(d).empty());
}

TEST(UsbControllerPorts, LibvirtsTable) {
  EXPECT_EQ(UsbControllerPorts("piix3-uhci", std::nullopt), 2u);
  EXPECT_EQ(UsbControllerPorts("ich9-ehci1", std::nullopt), 6u);
  EXPECT_EQ(UsbControllerPorts("ich9-uhci2", std::nullopt), 0u);
  EXPECT_EQ(UsbControllerPorts("qemu-xhci", std::nullopt), 4u);
  EXPECT_EQ(UsbControllerPorts("qemu-xhci", 15), 15u);
  EXPECT_EQ(UsbControllerPorts("nec-xhci", 8), 8u);
}

TEST(PlanSound, ModelsAndCodecs) {
  auto d = testing::MakeDomain();
  d.devices.sounds.resize(3);
  d.devices.sounds[0].model = "ich9";
  d.devices.sounds[1].model = "ich6";
  d.devices.sounds[1].codecs = {"output", "duplex"};
  d.devices.sounds[2].model = "ac97";
  Planned p = Plan(d);
  std::vector<std::string> want = {
      "-audiodev", R"({"id":"audio1","driver":"none"})",
      "-device", "ich9-intel-hda,id=sound0",
      "-device", "hda-duplex,id=sound0-codec0,bus=sound0.0,cad=0,audiodev=audio1",
      "-device", "intel-hda,id=sound1",
      "-device", "hda-output,id=sound1-codec0,bus=sound1.0,cad=0,audiodev=audio1",
      "-device", "hda-duplex,id=sound1-codec1,bus=sound1.0,cad=1,audiodev=audio1",
      "-device", "AC97,id=sound2,audiodev=audio1"};
  EXPECT_EQ(p.argv, want);
  int pci = 0;
  for (const PlannedDevice& dev : p.devices) {
    pci += dev.pci;
    if (dev.pci) {
      EXPECT_EQ(dev.rank, PciRank::kSound);
    }
  }
  EXPECT_EQ(pci, 3);  // the codecs sit on the HDA bus
}

TEST(PlanRedirDev, NeedsSpice) {
  auto d = testing::MakeDomain();
  d.devices.redirdevs.resize(1);
  d.devices.redirdevs[0].type = "spicevmc";
  d.devices.redirdevs[0].line = 60;
  EXPECT_EQ(ErrorLine(d), 60);
}

}  // namespace
}  // namespace qlaunch::qemu
