// The guest of the run-time change tests (setmem, setvcpus, update-memory-device): Debian's
// kernel with an initramfs whose /init is tests/boot/hotplug-init, reporting what it sees on its
// serial port once a second ("QLAUNCH-HOTPLUG: <kind> <value>").
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace qlaunch::testing {

struct HotplugGuest {
  std::filesystem::path kernel, initrd, serial;
  std::string missing;  // why there is no guest ("" when there is one): no kernel installed

  // <kernel>, <initrd> and <cmdline> for inside <os>; the serial port for inside <devices>.
  std::string OsXml(const std::string& extra_cmdline = "") const;
  std::string SerialXml() const;

  // The last "<kind> <value>" report, waiting up to `limit` until `ok(value)` holds; the last
  // value seen when it never does ("" when the guest never reported).
  std::string Report(const std::string& kind, const std::function<bool(const std::string&)>& ok,
                     std::chrono::seconds limit) const;
};

// Builds the guest's files in `dir` (the kernel copied, the initramfs made); a failure of the
// initramfs script is a test failure (ADD_FAILURE), a missing kernel is `missing`.
HotplugGuest MakeHotplugGuest(const std::filesystem::path& dir);

}  // namespace qlaunch::testing
