// QemuCaps: what a QEMU binary can do, as far as qlaunch's planning cares.
// Probed over QMP (qemu_cmd/caps_probe.h) and cached per binary (path + size + mtime).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace qlaunch::qemu {

struct QemuCaps {
  std::string binary;
  int major = 0, minor = 0, micro = 0;
  std::string package;  // e.g. "Debian 1:7.2+dfsg-7+deb12u18"
  bool thread_context = false;    // -object thread-context exists (7.2+)
  bool prealloc_context = false;  // memory backends have "prealloc-context"
  bool prealloc_threads = false;  // memory backends have "prealloc-threads" (5.0+)
  bool memfd = false;             // memory-backend-memfd exists
  bool memfd_hugetlb = false;     // ... with "hugetlb"/"hugetlbsize"
  bool json_object = false;       // -object accepts JSON (6.0+)
  bool sandbox = false;           // -sandbox is compiled in
  bool machine_memory_backend = false;  // -machine memory-backend= (5.0+)
  bool virtio_mem = false;          // -device virtio-mem-pci exists (5.1+)
  bool virtio_mem_prealloc = false;  // ... with "prealloc" (7.1+: the device preallocates what it plugs)
  bool backend_reserve = false;      // memory backends have "reserve" (6.1+)
  bool kvm = false;               // built with KVM (query-kvm "present") && this host's /dev/kvm opens rw

  bool VersionAtLeast(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
  std::string VersionString() const;
};

void to_json(nlohmann::json& j, const QemuCaps& c);
void from_json(const nlohmann::json& j, QemuCaps& c);

}  // namespace qlaunch::qemu
