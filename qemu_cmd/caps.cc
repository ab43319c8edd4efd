#include "qemu_cmd/caps.h"

#include <nlohmann/json.hpp>

namespace qlaunch::qemu {

std::string QemuCaps::VersionString() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(micro);
}

// Layout: tests/fixtures/caps/*.json.
void to_json(nlohmann::json& j, const QemuCaps& c) {
  j = nlohmann::json{
      {"binary", c.binary},
      {"version", {{"major", c.major}, {"minor", c.minor}, {"micro", c.micro}}},
      {"package", c.package},
      {"thread_context", c.thread_context},
      {"prealloc_context", c.prealloc_context},
      {"prealloc_threads", c.prealloc_threads},
      {"memfd", c.memfd},
      {"memfd_hugetlb", c.memfd_hugetlb},
      {"virtio_mem", c.virtio_mem},
      {"virtio_mem_prealloc", c.virtio_mem_prealloc},
      {"backend_reserve", c.backend_reserve},
      {"json_object", c.json_object},
      {"sandbox", c.sandbox},
      {"machine_memory_backend", c.machine_memory_backend},
      {"kvm", c.kvm},
  };
}

// Strict on the version (a caps file without one is not a caps file: throws
// nlohmann::json::exception); a missing feature flag reads as "not supported".
void from_json(const nlohmann::json& j, QemuCaps& c) {
  c = QemuCaps{};
  c.binary = j.value("binary", std::string());
  const auto& v = j.at("version");
  c.major = v.at("major").get<int>();
  c.minor = v.at("minor").get<int>();
  c.micro = v.value("micro", 0);
  c.package = j.value("package", std::string());
  c.thread_context = j.value("thread_context", false);
  c.prealloc_context = j.value("prealloc_context", false);
  c.prealloc_threads = j.value("prealloc_threads", false);
  c.memfd = j.value("memfd", false);
  c.memfd_hugetlb = j.value("memfd_hugetlb", false);
  c.virtio_mem = j.value("virtio_mem", false);
  c.virtio_mem_prealloc = j.value("virtio_mem_prealloc", false);
  c.backend_reserve = j.value("backend_reserve", false);
  c.json_object = j.value("json_object", false);
  c.sandbox = j.value("sandbox", false);
  c.machine_memory_backend = j.value("machine_memory_backend", false);
  c.kvm = j.value("kvm", false);
}

}  // namespace qlaunch::qemu
