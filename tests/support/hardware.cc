#include "support/hardware.h"
#include "support/build_paths.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>


namespace qlaunch::testing {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHideVar = "QLAUNCH_TEST_HIDE_HARDWARE";
constexpr const char* kHiddenKvmDevice = "/nonexistent/kvm-hidden-by-QLAUNCH_TEST_HIDE_HARDWARE";

std::set<std::string> Hidden() {
  std::set<std::string> out;
  const char* v = std::getenv(kHideVar);
  std::istringstream in(v ? v : "");
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) out.insert(name);
  return out;
}

// Hiding kvm must reach every qlaunch a test starts, also one started before the first
// MissingHardware("kvm"): the device qlaunch opens is pointed at nothing when the binary loads.
const bool kKvmHidden = [] {
  if (!Hidden().contains("kvm")) return false;
  ::setenv("QLAUNCH_KVM_DEVICE", kHiddenKvmDevice, 1);
  return true;
}();

std::string FirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

// Asked of the kernel here, not of qlaunch's own check (qemu_cmd/kvm_device.h), so that a wrong
// answer of the product's cannot hide itself: /dev/kvm opens, speaks API 12 and makes a VM.
std::string CheckKvm() {
  const int kvm = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm < 0) return std::string("cannot open /dev/kvm: ") + std::strerror(errno);
  std::string why;
  const int api = ::ioctl(kvm, KVM_GET_API_VERSION, 0);
  if (api != KVM_API_VERSION) {
    why = "/dev/kvm speaks API " + std::to_string(api) + ", not " + std::to_string(KVM_API_VERSION);
  } else if (const int vm = ::ioctl(kvm, KVM_CREATE_VM, 0); vm < 0) {
    why = std::string("/dev/kvm cannot make a VM: ") + std::strerror(errno);
  } else {
    ::close(vm);
  }
  ::close(kvm);
  return why;
}

std::string CheckGiganticPages() {
  if (fs::is_directory("/sys/kernel/mm/hugepages/hugepages-1048576kB")) return "";
  return "this kernel offers no 1 GiB pages (no /sys/kernel/mm/hugepages/hugepages-1048576kB)";
}

std::string CheckCpuset() {
  std::ifstream mounts("/proc/self/mounts");
  std::string dev, dir, type;
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream f(line);
    f >> dev >> dir >> type;
    if (type != "cgroup2") continue;
    std::string controllers = FirstLine(fs::path(dir) / "cgroup.controllers");
    if (std::regex_search(controllers, std::regex("(^| )cpuset( |$)"))) return "";
    return "the cgroup v2 hierarchy at " + dir + " has no cpuset controller (controllers: '" + controllers + "')";
  }
  return "no cgroup v2 hierarchy is mounted";
}

std::string CheckNumaNodes() {
  int nodes = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/sys/devices/system/node", ec), end; !ec && it != end; it.increment(ec))
    if (std::regex_match(it->path().filename().string(), std::regex("node[0-9]+"))) ++nodes;
  if (nodes > 1) return "";
  return "this host has " + std::to_string(nodes) + " NUMA node";
}

// Asked in a child, so the test process keeps its own limits.
std::string CheckMemlockRaise() {
  struct rlimit now {};
  ::getrlimit(RLIMIT_MEMLOCK, &now);
  if (now.rlim_max == RLIM_INFINITY) return "";
  pid_t child = ::fork();
  if (child == 0) {
    struct rlimit more {now.rlim_max + (1ull << 30), now.rlim_max + (1ull << 30)};
    ::_exit(::setrlimit(RLIMIT_MEMLOCK, &more) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return "this process may not raise RLIMIT_MEMLOCK above " + std::to_string(now.rlim_max) +
         " bytes (no CAP_SYS_RESOURCE)";
}

}  // namespace

std::vector<std::string> HardwareFeatureNames() {
  std::ifstream in(std::string(QLAUNCH_SOURCE_DIR) + "/tests/hardware-features");
  if (!in) throw std::runtime_error("cannot read tests/hardware-features");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') names.push_back(line.substr(0, line.find('\t')));
  return names;
}

std::string MissingHardware(const std::string& feature) {
  std::vector<std::string> names = HardwareFeatureNames();
  if (std::find(names.begin(), names.end(), feature) == names.end())
    throw std::invalid_argument("'" + feature + "' is not a hardware feature of tests/hardware-features");
  std::string why;
  if (Hidden().contains(feature)) {
    why = std::string("hidden by ") + kHideVar;
  } else if (feature == "kvm") {
    why = CheckKvm();
  } else if (feature == "hugepages-1G") {
    why = CheckGiganticPages();
  } else if (feature == "cpuset") {
    why = CheckCpuset();
  } else if (feature == "numa-nodes") {
    why = CheckNumaNodes();
  } else if (feature == "memlock-raise") {
    why = CheckMemlockRaise();
  } else {
    throw std::logic_error("tests/support/hardware.cc has no probe for '" + feature + "'");
  }
  return why.empty() ? "" : "missing hardware: " + feature + " (" + why + ")";
}

std::string MissingHardwareBecause(const std::string& feature, const std::string& why) {
  std::vector<std::string> names = HardwareFeatureNames();
  if (std::find(names.begin(), names.end(), feature) == names.end())
    throw std::invalid_argument("'" + feature + "' is not a hardware feature of tests/hardware-features");
  return "missing hardware: " + feature + " (" + why + ")";
}

std::string WithoutKvmWhereMissing(const std::string& xml_path, const std::string& dir) {
  std::ifstream in(xml_path);
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  static const std::regex kvm_domain(R"(<domain(\s[^>]*)?\stype\s*=\s*(['"])kvm\2)");
  std::smatch m;
  if (!std::regex_search(xml, m, kvm_domain) || MissingHardware("kvm").empty()) return xml_path;
  std::string copy = xml.substr(0, m.position(0)) +
                     std::regex_replace(m.str(0), std::regex(R"(type\s*=\s*(['"])kvm\1)"), "type='qemu'") +
                     xml.substr(m.position(0) + m.length(0));
  fs::create_directories(dir);
  fs::path out = fs::path(dir) / fs::path(xml_path).filename();
  std::ofstream(out) << copy;
  return out.string();
}

}  // namespace qlaunch::testing
