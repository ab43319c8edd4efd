#include "support/hotplug_guest.h"

#include <cctype>
#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "support/boot_kernel.h"
#include "support/build_paths.h"

namespace qlaunch::testing {

namespace fs = std::filesystem;

std::string HotplugGuest::OsXml(const std::string& extra_cmdline) const {
  return "    <kernel>" + kernel.string() + "</kernel>\n    <initrd>" + initrd.string() +
         "</initrd>\n    <cmdline>console=ttyS0 quiet panic=-1" + (extra_cmdline.empty() ? "" : " " + extra_cmdline) +
         "</cmdline>\n";
}

std::string HotplugGuest::SerialXml() const {
  return "    <serial type='file'><source path='" + serial.string() + "'/></serial>\n";
}

std::vector<std::string> HotplugGuest::Reports(const std::string& kind) const {
  const std::regex re(tag + ": " + kind + " ([^\r\n]*)\r?\n");
  std::ifstream log(serial);
  const std::string console((std::istreambuf_iterator<char>(log)), {});
  std::vector<std::string> values;
  for (std::sregex_iterator it(console.begin(), console.end(), re), stop; it != stop; ++it) values.push_back((*it)[1]);
  return values;
}

std::string HotplugGuest::Report(const std::string& kind, const std::function<bool(const std::string&)>& ok,
                                 std::chrono::seconds limit) const {
  std::string last;
  for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
    const std::vector<std::string> values = Reports(kind);
    if (!values.empty()) last = values.back();
    if (!last.empty() && ok(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return last;
}

bool HotplugGuest::AwaitNewReports(const std::string& kind, size_t n, std::chrono::seconds limit) const {
  const size_t want = Reports(kind).size() + n;
  for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
    if (Reports(kind).size() >= want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Reports(kind).size() >= want;
}

HotplugGuest MakeHotplugGuest(const fs::path& dir, const std::string& init) {
  HotplugGuest g;
  g.tag = "QLAUNCH-" + init.substr(0, init.rfind("-init"));
  for (char& c : g.tag) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string kver = NewestKernelVersion();
  if (kver.empty()) {
    g.missing = "no /boot/vmlinuz-* with its modules (scripts/setup installs linux-image-amd64)";
    return g;
  }
  g.kernel = dir / "vmlinuz";
  g.initrd = dir / "initrd.gz";
  g.serial = dir / "serial.log";
  fs::copy_file("/boot/vmlinuz-" + kver, g.kernel, fs::copy_options::overwrite_existing);
  const std::string make = std::string(QLAUNCH_SOURCE_DIR) + "/tests/boot/make-device-initramfs " + kver + " " +
                           g.initrd.string() + " " + init;
  if (std::system(make.c_str()) != 0) ADD_FAILURE() << make;
  return g;
}

}  // namespace qlaunch::testing
