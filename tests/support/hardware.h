// The one place a test decides "this host lacks hardware H": the features a test may be skipped
// for are listed in tests/hardware-features (NAME<TAB>what), and scripts/test-report fails a CI
// run whose skipped tests give any other reason. QLAUNCH_TEST_HIDE_HARDWARE=kvm,hugepages-1G
// reports the named features as missing, so that the branch a machine without them takes runs
// here too; hiding kvm also points qlaunch at no KVM device (QLAUNCH_KVM_DEVICE).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace qlaunch::testing {

// "" when the host has `feature` (a name of tests/hardware-features), else
// "missing hardware: FEATURE (why)". An unknown name throws std::invalid_argument.
std::string MissingHardware(const std::string& feature);

// "missing hardware: FEATURE (why)" for what a test learns only by asking for it: the kernel has
// the 1 GiB page size, but cannot make two such pages at run time (memory fragmented by what ran
// before, even after compaction). An unknown name throws std::invalid_argument.
std::string MissingHardwareBecause(const std::string& feature, const std::string& why);

// The names of tests/hardware-features, in its order.
std::vector<std::string> HardwareFeatureNames();

// The path of a copy of XML_PATH that this host can run without KVM: XML_PATH itself where KVM
// is usable or the domain is not type='kvm', else DIR/<file name> with <domain type='qemu'>
// (every line where it was, so diagnostics keep their line numbers). For tests that are not
// about the accelerator; both sides of a comparison get the same copy.
std::string WithoutKvmWhereMissing(const std::string& xml_path, const std::string& dir);

}  // namespace qlaunch::testing

// Skips the test (from a TEST body or SetUp) when the host lacks FEATURE, with the reason.
#define QLAUNCH_SKIP_WITHOUT_HARDWARE(feature)                                              \
  if (const std::string qlaunch_missing_ = ::qlaunch::testing::MissingHardware(feature); \
      !qlaunch_missing_.empty())                                                          \
  GTEST_SKIP() << qlaunch_missing_
