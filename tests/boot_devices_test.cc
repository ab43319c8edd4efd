// A real guest finds the devices qlaunch gives it: Debian's kernel and a busybox initramfs
// (tests/boot/make-device-initramfs) that loads the virtio modules of that kernel's package and
// reports, over a <serial type='file'>, the first bytes of its virtio disk, the DHCP lease its
// virtio NIC gets on user networking, the guest agent channel, the RNG and its two NUMA cells
// (on hugepages), then powers off. Under TCG (nested KVM guests hang in early boot here), with
// `qlaunch run`, which ends when the guest powers off.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "support/hugepages.h"
#include "support/boot_kernel.h"
#include "support/launch_env.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

class BootDevicesTest : public LaunchTest {};

TEST_F(BootDevicesTest, TheGuestFindsItsDiskNicAgentChannelRngAndNumaCells) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (hugepages, QEMU's own user)";
  const std::string kver = NewestKernelVersion();
  if (kver.empty()) GTEST_SKIP() << "no /boot/vmlinuz-* with its modules (scripts/setup installs linux-image-amd64)";
  HugepagePool pool = HugepagePool::AtLeast(128);
  if (!pool.ok()) GTEST_SKIP() << "cannot size the hugepage pool: " << pool.error();
  const uint64_t free_before = HugepagesFree();

  const fs::path kernel = tmp() / "vmlinuz", initrd = tmp() / "initrd.gz", disk = tmp() / "disk.raw",
                 serial = tmp() / "serial.log", xml = tmp() / "boot-devices.xml";
  fs::copy_file("/boot/vmlinuz-" + kver, kernel);
  const std::string make =
      std::string(QLAUNCH_SOURCE_DIR) + "/tests/boot/make-device-initramfs " + kver + " " + initrd.string();
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  {
    std::ofstream d(disk);
    d << "qlaunch-disk";
    d.seekp((1 << 20) - 1);
    d << '\0';
  }
  std::ofstream(xml) << "<domain type='qemu'>\n"
                        "  <name>boot-devices</name>\n"
                        "  <memory unit='MiB'>256</memory>\n"
                        "  <memoryBacking><hugepages/><source type='memfd'/><access mode='shared'/></memoryBacking>\n"
                        "  <vcpu>2</vcpu>\n"
                        "  <os>\n"
                        "    <type arch='x86_64' machine='q35'>hvm</type>\n"
                        "    <kernel>" << kernel.string() << "</kernel>\n"
                        "    <initrd>" << initrd.string() << "</initrd>\n"
                        "    <cmdline>console=ttyS0 quiet panic=-1</cmdline>\n"
                        "  </os>\n"
                        "  <features><acpi/><apic/></features>\n"  // the guest's poweroff is ACPI S5
                        "  <cpu mode='custom'><model>qemu64</model>\n"
                        "    <numa>\n"
                        "      <cell id='0' cpus='0' memory='128' unit='MiB'/>\n"
                        "      <cell id='1' cpus='1' memory='128' unit='MiB'/>\n"
                        "    </numa>\n"
                        "  </cpu>\n"
                        "  <devices>\n"
                        "    <disk type='file' device='disk'><driver name='qemu' type='raw'/>\n"
                        "      <source file='" << disk.string() << "'/><target dev='vda' bus='virtio'/></disk>\n"
                        "    <interface type='user'><mac address='52:54:00:ab:cd:01'/><model type='virtio'/></interface>\n"
                        "    <serial type='file'><source path='" << serial.string() << "'/></serial>\n"
                        "    <channel type='unix'><source mode='bind'/>\n"
                        "      <target type='virtio' name='org.qemu.guest_agent.0'/></channel>\n"
                        "    <rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>\n"
                        "    <memballoon model='virtio'/>\n"
                        "  </devices>\n"
                        "</domain>\n";

  RunResult r = Qlaunch({"run", xml.string()}, {}, std::chrono::minutes(4));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  std::ifstream log(serial);
  const std::string console((std::istreambuf_iterator<char>(log)), {});
  auto saw = [&](const std::string& pattern) {
    return std::regex_search(console, std::regex("QLAUNCH-BOOT: " + pattern));
  };
  const std::string tail = console.size() > 3000 ? console.substr(console.size() - 3000) : console;
  EXPECT_TRUE(saw("disk qlaunch-disk")) << tail;
  EXPECT_TRUE(saw("mac 52:54:00:ab:cd:01")) << tail;
  EXPECT_TRUE(saw("lease 10\\.0\\.2\\.[0-9]+")) << tail;
  EXPECT_TRUE(saw("port org\\.qemu\\.guest_agent\\.0")) << tail;
  EXPECT_TRUE(saw("rng virtio_rng\\.0")) << tail;
  // Both cells, each with its CPU and most of its 128 MiB (the kernel keeps some).
  EXPECT_TRUE(saw("node node0 ([6-9][0-9]|1[0-3][0-9])[0-9]{3} kB cpus 0")) << tail;
  EXPECT_TRUE(saw("node node1 ([6-9][0-9]|1[0-3][0-9])[0-9]{3} kB cpus 1")) << tail;
  EXPECT_TRUE(saw("done")) << tail;
  EXPECT_FALSE(saw("insmod-failed")) << tail;
  EXPECT_FALSE(fs::exists(DomainStateDir("boot-devices")));
  EXPECT_EQ(HugepagesFree(), free_before) << "the guest's hugepages were not returned";
  struct stat st {};
  ASSERT_EQ(::stat(disk.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the disk was not given back";
}

}  // namespace
}  // namespace qlaunch::testing
