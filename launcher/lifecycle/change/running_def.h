// What a domain runs with now, and the one place that changes it at run time (attach-device,
// detach-device): the state dir's files, each rewritten whole (a temporary renamed into place).
//
//   domain.xml    the XML as given; never changed (`dumpxml --inactive`)
//   running.xml   the running definition: domain.xml with the devices attached since and without
//                 those detached; written at the first change, read instead of domain.xml after
//   plan.json     "devices": a record per device QEMU runs (qemu_cmd/launch_plan.h), each naming
//                 its element by line in the running definition; "node_index": the highest
//                 libvirt-N node name used
//   devices.json  "interfaces": the host side of each <interface>, in document order
//   change.json   a change under way, written before its first QMP command and removed after the
//                 files above: a change cut short (qlaunch killed) is finished or undone by the
//                 next attach-device or detach-device, which asks QEMU whether the device exists
//   detaching.json  the detaches the guest had not completed when detach-device gave up waiting:
//                 the next attach-device or detach-device finishes each once QEMU reports the
//                 device gone
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/domain_def.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

struct RunningState {
  std::filesystem::path dir;
  std::string xml;       // the running definition's text
  std::string xml_file;  // its path (running.xml, or domain.xml before the first change)
  domain::DomainDef def;
  nlohmann::json plan;   // plan.json
  nlohmann::json host;   // devices.json
  std::vector<qemu::DeviceRecord> records;
  unsigned node_index = 0;
};

// The running definition's path: running.xml once a change was made, else domain.xml.
std::filesystem::path RunningXmlPath(const std::filesystem::path& domain_dir);

// Throws std::runtime_error when a file is missing or unreadable (a domain started by a
// qlaunch older than the device records), DiagnosticError when the XML does not parse.
RunningState LoadRunningState(const std::filesystem::path& domain_dir);

// Adds the device element `element_xml` (the text of a device file) at the end of <devices>,
// its record (line set to where the element now is), the node index, and for an interface its
// host side (`host_nic`, null otherwise) at the end of devices.json's interfaces.
void CommitAttach(RunningState* st, const std::string& element_xml, qemu::DeviceRecord record, unsigned node_index,
                  const nlohmann::json& host_nic);

// Removes the element of `name` at `line` of the running definition and every record of it
// (and for an interface its devices.json entry).
void CommitDetach(RunningState* st, const std::string& name, int line);

// The running definition's <vcpu current>: `current` vCPUs of its <vcpu> count run (the
// attribute goes when all do, as in libvirt's live XML), and, while more run than the `boot` ones
// QEMU started with, <vcpus> says which were plugged since (libvirt's live XML again): a restore or
// a migration destination starts the boot ones and plugs the others (domain/vcpu_counts.h).
// Devices keep their records.
void CommitVcpus(RunningState* st, unsigned boot, unsigned current);

// The <requested> size of the <memory> element at `line` (a virtio-mem device), written in KiB
// into its <target>. Devices keep their lines.
void CommitMemoryRequested(RunningState* st, int line, uint64_t requested_bytes);

// A memory device attached or detached (after CommitAttach / before CommitDetach of its element):
// plan.json's "backends" and "memory_devices" gain `backend`/`device` (when not null) or lose the
// entries of `remove_id`/`remove_memdev` (when not empty), and the running definition's <memory>
// becomes `memory_bytes` (libvirt's total: the cells plus the memory devices).
void CommitMemoryDevices(RunningState* st, const nlohmann::json& backend, const nlohmann::json& device,
                         const std::string& remove_id, const std::string& remove_memdev, uint64_t memory_bytes);

// change.json
void WriteChange(const std::filesystem::path& domain_dir, const nlohmann::json& change);
std::optional<nlohmann::json> ReadChange(const std::filesystem::path& domain_dir);
void ClearChange(const std::filesystem::path& domain_dir);

// detaching.json (an empty list removes it).
std::vector<nlohmann::json> PendingDetaches(const std::filesystem::path& domain_dir);
void SetPendingDetaches(const std::filesystem::path& domain_dir, const std::vector<nlohmann::json>& pending);

}  // namespace qlaunch::launcher
