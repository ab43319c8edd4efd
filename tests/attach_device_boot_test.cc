// A booted guest sees what attach-device gives it and lets go of what detach-device takes:
// Debian's kernel and a busybox initramfs (tests/boot/make-device-initramfs with
// tests/boot/hotplug-init) that reports its virtio disks' first bytes and its NICs' carrier on
// a <serial type='file'> every second. A disk with known bytes and a NIC are attached to the
// running q35 guest (PCIe hotplug into spare root ports), seen by it, then detached: the guest
// releases them (DEVICE_DELETED), they vanish from its view, and the image is root's again.
// Under TCG (nested KVM guests hang in early boot here).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "support/boot_kernel.h"
#include "support/launch_env.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class AttachDeviceBootTest : public LaunchTest {};

TEST_F(AttachDeviceBootTest, TheGuestSeesTheAttachedDiskAndNicAndLetsThemGo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (QEMU's own user, image owners)";
  const std::string kver = NewestKernelVersion();
  if (kver.empty()) GTEST_SKIP() << "no /boot/vmlinuz-* with its modules (scripts/setup installs linux-image-amd64)";
  const fs::path kernel = tmp() / "vmlinuz", initrd = tmp() / "initrd.gz", boot = tmp() / "vda.raw",
                 extra = tmp() / "vdb.raw", serial = tmp() / "serial.log", xml = tmp() / "hpboot.xml";
  fs::copy_file("/boot/vmlinuz-" + kver, kernel);
  const std::string make = std::string(QLAUNCH_SOURCE_DIR) + "/tests/boot/make-device-initramfs " + kver + " " +
                           initrd.string() + " hotplug-init";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  for (const auto& [path, text] : {std::pair{boot, std::string("boot")}, std::pair{extra, std::string("hotplugged-disk")}}) {
    std::ofstream d(path);
    d << text;
    d.seekp((1 << 20) - 1);
    d << '\0';
  }
  std::ofstream(xml) << "<domain type='qemu'>\n  <name>hpboot</name>\n  <memory unit='MiB'>256</memory>\n"
                        "  <vcpu>1</vcpu>\n  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n"
                        "    <kernel>" << kernel.string() << "</kernel>\n    <initrd>" << initrd.string() << "</initrd>\n"
                        "    <cmdline>console=ttyS0 quiet panic=-1</cmdline>\n  </os>\n"
                        "  <features><acpi/><apic/></features>\n  <devices>\n"
                        "    <controller type='pci' index='0' model='pcie-root'/>\n"
                        "    <controller type='pci' index='1' model='pcie-root-port'/>\n"
                        "    <controller type='pci' index='2' model='pcie-root-port'/>\n"
                        "    <controller type='pci' index='3' model='pcie-root-port'/>\n"
                        "    <controller type='pci' index='4' model='pcie-root-port'/>\n"
                        "    <controller type='usb' model='none'/>\n"
                        "    <disk type='file' device='disk'><driver name='qemu' type='raw'/>\n"
                        "      <source file='" << boot.string() << "'/><target dev='vda' bus='virtio'/></disk>\n"
                        "    <serial type='file'><source path='" << serial.string() << "'/></serial>\n"
                        "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
  std::ofstream(tmp() / "disk.xml") << "<disk type='file' device='disk'>\n  <driver name='qemu' type='raw'/>\n"
                                       "  <source file='" << extra.string() << "'/>\n  <target dev='vdb' bus='virtio'/>\n</disk>\n";
  std::ofstream(tmp() / "nic.xml") << "<interface type='user'>\n  <mac address='52:54:00:ab:cd:42'/>\n"
                                      "  <model type='virtio'/>\n</interface>\n";

  RunResult started = Qlaunch({"start", xml.string()});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  // The console's last report line of a kind, waiting until `want` matches it. A report there
  // must be: an empty `want` (nothing extra) is not met by a guest that has said nothing yet.
  auto wait_for = [&](const std::string& kind, const std::string& want, std::chrono::seconds limit) {
    const std::regex re("QLAUNCH-HOTPLUG: " + kind + "([^\r\n]*)\r?\n");
    std::string last = "(no report yet)";
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      std::ifstream log(serial);
      const std::string console((std::istreambuf_iterator<char>(log)), {});
      bool reported = false;
      for (std::sregex_iterator it(console.begin(), console.end(), re), stop; it != stop; ++it, reported = true)
        last = (*it)[1];
      if (reported && console.find("QLAUNCH-HOTPLUG: up") != std::string::npos &&
          std::regex_search(last, std::regex(want)))
        return last;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return "timed out; last report: '" + last + "'";
  };
  // Booted, with nothing extra: no disk but vda, no NIC.
  EXPECT_EQ(wait_for("disks", "^$", std::chrono::seconds(120)), "");
  EXPECT_EQ(wait_for("nics", "^$", std::chrono::seconds(10)), "");

  RunResult disk = Qlaunch({"attach-device", "hpboot", (tmp() / "disk.xml").string()});
  ASSERT_EQ(disk.exit_code, 0) << disk.Describe();
  struct stat st {};
  ASSERT_EQ(::stat(extra.c_str(), &st), 0);
  EXPECT_NE(st.st_uid, 0u) << "the attached image was not given to QEMU's user";
  RunResult nic = Qlaunch({"attach-device", "hpboot", (tmp() / "nic.xml").string()});
  ASSERT_EQ(nic.exit_code, 0) << nic.Describe();
  EXPECT_EQ(wait_for("disks", "^ vdb=hotplugged-disk$", std::chrono::seconds(60)), " vdb=hotplugged-disk");
  EXPECT_EQ(wait_for("nics", "^ eth0=52:54:00:ab:cd:42/1$", std::chrono::seconds(60)), " eth0=52:54:00:ab:cd:42/1");

  // The guest releases both (PCIe hotplug waits its 5 s attention-button delay).
  for (const char* f : {"disk.xml", "nic.xml"}) {
    RunResult r = Qlaunch({"detach-device", "--timeout", "60", "hpboot", (tmp() / f).string()});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
  }
  EXPECT_EQ(wait_for("disks", "^$", std::chrono::seconds(30)), "");
  EXPECT_EQ(wait_for("nics", "^$", std::chrono::seconds(30)), "");
  ASSERT_EQ(::stat(extra.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the detached image was not given back";
  const std::string blk = Qlaunch({"domblklist", "hpboot"}).out;
  EXPECT_EQ(blk.find("vdb"), std::string::npos) << blk;
  RunResult gone = Qlaunch({"destroy", "hpboot"});
  EXPECT_EQ(gone.exit_code, 0) << gone.Describe();
}

}  // namespace
}  // namespace qlaunch::testing
