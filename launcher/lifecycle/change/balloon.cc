#include "launcher/lifecycle/change/balloon.h"

#include <stdexcept>

#include "domain/parser.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace {

std::string KiB(uint64_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

}  // namespace

SetMemoryResult SetMemory(const StateDir& state, const std::string& name, uint64_t target_bytes,
                          std::chrono::milliseconds timeout) {
  if (target_bytes < 1024) throw std::runtime_error("setmem: the new memory size must be at least 1 KiB");
  DomainSession s = OpenDomainSession(state, name, Verb::kSetmem, timeout);
  const RunningState running = LoadRunningState(state.DomainDir(name));
  const domain::DomainDef& def = running.def;
  SetMemoryResult r;
  r.target_bytes = target_bytes / 1024 * 1024;  // libvirt counts in KiB
  r.max_bytes = def.memory_bytes;
  if (r.target_bytes > r.max_bytes)
    throw std::runtime_error("domain " + name + ": cannot set memory higher than max memory (" + KiB(r.target_bytes) +
                             " asked, <memory> is " + KiB(r.max_bytes) + ")");
  // No <memballoon> means libvirt's virtio one (x86); model='none' means none.
  if (def.devices.memballoon && def.devices.memballoon->model == "none")
    throw std::runtime_error("domain " + name +
                             ": Unable to change memory of active domain without the balloon device and guest OS "
                             "balloon driver (its XML has <memballoon model='none'>)");
  r.balloon = "balloon0";
  r.qmp = {{"execute", "balloon"}, {"arguments", {{"value", r.target_bytes}}}};
  try {
    s.qmp->Execute("balloon", r.qmp["arguments"], timeout);
  } catch (const qemu::QmpTimeout&) {
    throw;
  } catch (const qemu::QmpError& e) {
    throw std::runtime_error("domain " + name +
                             ": Unable to change memory of active domain without the balloon device and guest OS "
                             "balloon driver (QEMU: " + e.what() + ")");
  }
  return r;
}

std::optional<uint64_t> BalloonActual(const std::string& qmp_socket, std::chrono::milliseconds timeout) {
  try {
    auto qmp = qemu::QmpClient::Connect(qmp_socket, timeout);
    qmp->Execute("qmp_capabilities", nullptr, timeout);
    const nlohmann::json b = qmp->Execute("query-balloon", nullptr, timeout);
    if (b.contains("actual") && b["actual"].is_number_unsigned()) return b["actual"].get<uint64_t>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace qlaunch::launcher
