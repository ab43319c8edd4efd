// LaunchPlan: everything qlaunch will do to start a domain, decided up front by the pure
// planner (qemu_cmd/planner.h): memory backends, thread-contexts, who preallocates, the argv.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/diagnostic.h"
#include "common/id_set.h"
#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

enum class BackendType { kRam, kFile, kMemfd };
enum class PreallocBy { kNone, kQemu, kLauncher };
enum class PreallocMode { kAuto, kQemu, kLauncher };  // --prealloc

struct ThreadContext {
  std::string id;      // "tc-<id of its first user>"
  IdSet node_affinity; // host nodes with CPUs
  IdSet cpus;          // the CPUs those nodes give (what QEMU will pin the threads to)
};

struct MemoryBackend {
  std::string id;        // "ram-node<cell>", "pc.ram", "memdimm<slot>", "memnvdimm<slot>"
  BackendType type = BackendType::kRam;
  uint64_t size_bytes = 0;
  IdSet host_nodes;      // empty: no binding
  std::string policy;    // "", "bind", "preferred", "interleave"
  uint64_t page_size_bytes = 0;  // 0: ordinary pages (not hugetlb)
  bool shared = false;
  std::optional<bool> share_explicit;  // rendered "share" when set (file/memfd backends)
  PreallocBy prealloc = PreallocBy::kNone;
  unsigned prealloc_threads = 0;  // 0: do not render
  std::string thread_context;     // id, or "" for none
  std::string mem_path;           // file backends: dir or file; launcher: /proc/self/fd/N
  int launcher_fd = -1;           // launcher backends: the fd number QEMU inherits
  std::optional<bool> discard;    // discard-data, when the domain says (file backends; as libvirt)
  std::optional<bool> reserve;    // "reserve", when rendered (virtio-mem: false, as libvirt)
  std::optional<unsigned> guest_node;  // the -numa node / dimm target it serves
  bool is_device = false;         // dimm/nvdimm/virtio-mem backend (rendered with its -device)
  // virtio-mem: the backend is rendered by the device plan (the device is a PCI device), and
  // only the plugged part (requested size) takes pages at start; nobody preallocates the
  // backend (the device does, for what it plugs).
  bool virtio_mem = false;
  uint64_t plugged_bytes = 0;
  // Added by the planner (not rendered): the CPUs the threads that populate this backend run
  // on (its thread-context's CPUs, or for launcher backends the CPUs the launcher's workers
  // should use); empty when nobody preallocates.
  IdSet prealloc_cpus;
  // Launcher backends: how many worker threads the launcher should populate with (the
  // domain's <allocation threads>, else sized like prealloc-threads); 0 otherwise.
  unsigned launcher_threads = 0;
  // Why `prealloc` is who it is (ChoosePreallocator); "" when nobody preallocates.
  std::string prealloc_reason;
};

struct MemoryDeviceArg {  // -device pc-dimm / nvdimm / virtio-mem-pci after its backend
  std::string driver;     // pc-dimm | nvdimm | virtio-mem-pci
  std::string id;         // dimm0, virtiomem0
  std::string memdev;
  unsigned node = 0;
  std::optional<unsigned> slot;
  std::optional<uint64_t> addr;
  // virtio-mem: block-size, requested-size (unset: not rendered), prealloc, the XML's PCI address.
  uint64_t block_size = 0;
  std::optional<uint64_t> requested_size;
  bool prealloc = false;
  domain::DeviceAddress pci_address;
  int line = 0;  // of the <memory> element
};

// A device of the plan as it was placed: which element of the XML it came from, the id QEMU knows
// it by (libvirt's alias), its properties and its PCI address. `qlaunch dumpxml` writes the live
// XML from these (launcher/lifecycle/change/live_xml.h).
struct DeviceRecord {
  std::string element;  // "disk", "interface", "controller", ...; "" for none
  int line = 0;         // of that element in the XML; 0 for devices the XML does not name
  std::string family, driver, id;
  std::vector<std::pair<std::string, std::string>> props;
  std::optional<PciSlot> slot;
};

// plan.json's form of a record, and back (for what a running domain recorded). FromJson throws
// std::runtime_error on a record that is not one.
nlohmann::json ToJson(const DeviceRecord& d);
DeviceRecord DeviceRecordFromJson(const nlohmann::json& j);

struct PlanOptions {
  PreallocMode prealloc = PreallocMode::kAuto;
  std::string qmp_socket;          // path of the QMP UNIX socket (server=on,wait=off)
  int qmp_fd = -1;                 // >= 0: QEMU inherits the listening QMP socket as this fd
                                   // (`start`); qmp_socket is then only where qlaunch connects
  std::string memory_backing_dir;  // for non-hugetlb file backends; default /run/qlaunch/<name>/ram
  int first_launcher_fd = 3;       // fd numbers for launcher-populated memfds start here
  std::string emulator;            // argv[0] when caps.binary is empty (before the domain's <emulator>)
  bool supervised = false;         // `qlaunch run` watches QEMU: -no-shutdown, it acts on poweroff/crash
  int events_fd = -1;              // >= 0: a second QMP monitor on this listening fd, for the supervisor
  DeviceResources devices;         // taps, sockets, ports, nvram the launcher prepared (start only)
  // The destination of a migration (`start --incoming`): `-incoming defer` and no `-S`, so QEMU
  // runs the guest once the migration is in exactly when the source ran it (the run state travels
  // with the stream); it listens only when told (migrate-incoming), after qlaunch filled memory.
  bool incoming = false;
};

struct LaunchPlan {
  std::string name;
  std::string emulator;
  std::vector<ThreadContext> contexts;
  std::vector<MemoryBackend> backends;
  std::vector<MemoryDeviceArg> memory_devices;
  std::vector<DeviceRecord> devices;  // every planned device, in argv order
  std::vector<std::string> argv;     // argv[0] is the emulator
  std::vector<Diagnostic> notes;     // warnings from planning (e.g. KVM asked for, not usable here)

  // Hugepages the plan takes from each host pool: (node or -1 for unbound, page bytes) -> pages.
  struct PoolNeed { int node; uint64_t page_bytes; uint64_t pages; };
  std::vector<PoolNeed> pool_needs;

  uint64_t initial_memory_bytes = 0;  // what -m size= says (boot memory, without DIMMs)

  // QMP commands `qlaunch start` sends before `cont`, for device state QEMU has no option for
  // (e.g. set_link for <link state='down'/>, as libvirt does).
  struct QmpCommand { std::string execute; std::string arguments_json; };
  std::vector<QmpCommand> before_cont;
  // <vcpus> with hotplugged vCPUs (a restore, a migration destination): QEMU starts with -smp's
  // boot vCPUs and qlaunch plugs the next ones, in order, up to this many before cont (the
  // device_add of each needs QEMU's query-hotpluggable-cpus, so it is planned at start:
  // qemu_cmd/vcpu_hotplug_plan.h). 0: none to plug.
  unsigned plug_vcpus_to = 0;
};

const char* ToString(BackendType t);
const char* ToString(PreallocBy p);
const char* ToString(PreallocMode m);
// The QOM type the backend is rendered as: launcher backends are memory-backend-file on
// /proc/self/fd/N even though their memory is a memfd (type kMemfd).
const char* QomType(const MemoryBackend& b);
// The JSON object `domxml-to-native --format json` prints (argv, backends, thread_contexts).
nlohmann::json ToJson(const LaunchPlan& plan);

}  // namespace qlaunch::qemu
