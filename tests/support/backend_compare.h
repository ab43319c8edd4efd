// libvirt's rendered memory backend (-object memory-backend-*, JSON) against qlaunch's, every
// key either side sets, with the differences we intend by number (docs/libvirt-differences.md):
// shared by the differential test against a live libvirt (tests/libvirt_differential_test.cc)
// and the conformance test against libvirt's own expected args (tests/libvirt_conformance_test.cc).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qlaunch::testing {

// One line per property where qlaunch's object `ours` differs from libvirt's `want` (both the
// backend `id`); empty when they agree. Left to the caller: prealloc-context (the ids differ,
// difference 2: compare the contexts' node-affinity) and prealloc-threads (difference 3).
// Encoded here: difference 5 (mem-path: our own directory layout; both or neither set one) and
// difference 6 (libvirt's x-use-canonical-path-for-ramblock-id=false on pc.ram only).
std::vector<std::string> BackendObjectDifferences(const std::string& id, const nlohmann::json& want,
                                                  const nlohmann::json& ours);

}  // namespace qlaunch::testing
