// The booted guest of the run-time change tests (setmem, setvcpus, update-memory-device) and of
// live migration: Debian's kernel with an initramfs whose /init is a script of tests/boot/
// (hotplug-init, migrate-init) that reports on its serial port ("QLAUNCH-HOTPLUG: <kind> <value>",
// "QLAUNCH-MIGRATE: <kind> <value>").
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace qlaunch::testing {

struct HotplugGuest {
  std::filesystem::path kernel, initrd, serial;
  std::string tag = "QLAUNCH-HOTPLUG";  // what its reports start with
  std::string missing;  // why there is no guest ("" when there is one): no kernel installed

  // <kernel>, <initrd> and <cmdline> for inside <os>; the serial port for inside <devices>.
  std::string OsXml(const std::string& extra_cmdline = "") const;
  std::string SerialXml() const;

  // The values of every complete "<kind> <value>" report on the console so far, oldest first.
  std::vector<std::string> Reports(const std::string& kind) const;
  // The last "<kind> <value>" report, waiting up to `limit` until `ok(value)` holds; the last
  // value seen when it never does ("" when the guest never reported).
  std::string Report(const std::string& kind, const std::function<bool(const std::string&)>& ok,
                     std::chrono::seconds limit) const;
  // Waits until `n` more "<kind>" reports than there are now have come (at most `limit`): what
  // the guest reports next was seen after this call. False when they did not come in time.
  bool AwaitNewReports(const std::string& kind, size_t n, std::chrono::seconds limit) const;
};

// Builds the guest's files in `dir` (the kernel copied, the initramfs made with tests/boot/`init`
// as its /init); a failure of the initramfs script is a test failure (ADD_FAILURE), a missing
// kernel is `missing`. Its reports start with "QLAUNCH-" and the init's name up to "-init" in
// capitals (migrate-init: "QLAUNCH-MIGRATE"), as the scripts print them.
HotplugGuest MakeHotplugGuest(const std::filesystem::path& dir, const std::string& init = "hotplug-init");

}  // namespace qlaunch::testing
