#include "support/backend_compare.h"

#include <set>

namespace qlaunch::testing {

using nlohmann::json;

std::vector<std::string> BackendObjectDifferences(const std::string& id, const json& want, const json& ours) {
  std::vector<std::string> out;
  std::set<std::string> keys;
  for (const auto& [k, v] : want.items()) keys.insert(k);
  for (const auto& [k, v] : ours.items()) keys.insert(k);
  keys.erase("prealloc-context");  // ids differ (difference 2)
  keys.erase("prealloc-threads");  // difference 3
  if (keys.erase("mem-path") && want.contains("mem-path") != ours.contains("mem-path"))
    out.push_back(id + ": mem-path only under " + (want.contains("mem-path") ? "libvirt" : "qlaunch") +
                  " (difference 5 is the directory, not whether there is one)");
  if (keys.erase("x-use-canonical-path-for-ramblock-id")) {
    // Difference 6: libvirt names the main RAM's RAMBlock "pc.ram" for migration from -m.
    if (id != "pc.ram" || want.value("x-use-canonical-path-for-ramblock-id", true) != false ||
        ours.contains("x-use-canonical-path-for-ramblock-id"))
      out.push_back(id + ": x-use-canonical-path-for-ramblock-id libvirt " +
                    want.value("x-use-canonical-path-for-ramblock-id", json()).dump() + ", qlaunch " +
                    ours.value("x-use-canonical-path-for-ramblock-id", json()).dump() +
                    " (difference 6: libvirt's false on pc.ram only)");
  }
  for (const std::string& k : keys) {
    const json a = want.value(k, json()), b = ours.value(k, json());
    if (a != b) out.push_back(id + ": property " + k + ": libvirt " + a.dump() + ", qlaunch " + b.dump());
  }
  return out;
}

}  // namespace qlaunch::testing
