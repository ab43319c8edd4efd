#include "launcher/lifecycle/change/set_vcpus.h"

#include <algorithm>
#include <stdexcept>

#include "domain/parser.h"
#include "domain/vcpu_counts.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "qemu_cmd/vcpu_hotplug_plan.h"

namespace qlaunch::launcher {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Is the vCPU with qdev id `id` still plugged?
bool Plugged(qemu::QmpClient& qmp, const std::string& id, std::chrono::milliseconds timeout) {
  for (const qemu::HotpluggableCpu& c :
       qemu::ParseHotpluggableCpus(qmp.Execute("query-hotpluggable-cpus", nullptr, timeout)))
    if (c.qom_path == "/machine/peripheral/" + id) return true;
  return false;
}

// Sends device_del for `id` and waits up to `unplug_wait` for the guest to release it: QEMU's
// DEVICE_DELETED, or the slot empty in query-hotpluggable-cpus (QEMU 7.2 removes an x86 vCPU
// the guest ejected without that event), asked twice a second. False when it is still plugged.
bool Unplug(qemu::QmpClient& qmp, const std::string& id, const SetVcpusOptions& o, json* log) {
  log->push_back({{"execute", "device_del"}, {"arguments", {{"id", id}}}});
  qmp.Execute("device_del", {{"id", id}}, o.qmp_timeout);
  for (const auto deadline = Clock::now() + o.unplug_wait;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return !Plugged(qmp, id, o.qmp_timeout);
    std::optional<json> ev = qmp.NextEvent(std::min(left, std::chrono::milliseconds(500)));
    if (ev && ev->value("event", "") == "DEVICE_DELETED" &&
        ev->value("data", json::object()).value("device", "") == id)
      return true;
    if (!Plugged(qmp, id, o.qmp_timeout)) return true;
  }
}

}  // namespace

SetVcpusResult SetVcpus(const StateDir& state, const SetVcpusOptions& o) {
  DomainSession s = OpenDomainSession(state, o.name, Verb::kSetvcpus, o.qmp_timeout);
  const auto dir = state.DomainDir(o.name);
  RunningState st = LoadRunningState(dir);
  const domain::DomainDef boot_def = domain::ParseDomainFile((dir / "domain.xml").string());
  const unsigned boot = domain::BootVcpus(boot_def.vcpu);
  auto ask = [&] {
    return qemu::ParseHotpluggableCpus(s.qmp->Execute("query-hotpluggable-cpus", nullptr, o.qmp_timeout));
  };
  auto record = [&] {
    const unsigned now = qemu::PluggedCount(ask());
    CommitVcpus(&st, boot, now);
    return now;
  };

  const std::vector<qemu::HotpluggableCpu> cpus = ask();
  SetVcpusResult r;
  r.max = static_cast<unsigned>(cpus.size());
  r.before = qemu::PluggedCount(cpus);
  CommitVcpus(&st, boot, r.before);
  const qemu::VcpuChange plan = qemu::PlanSetVcpus(cpus, boot, o.count);
  // Under TCG QEMU keeps an unplugged vCPU's translator state: the next plug aborts QEMU
  // ("tcg_register_thread: assertion failed: (n < tcg_max_ctxs)") and a save after it dies of a
  // corrupted heap (QEMU 7.2; libvirt's setvcpus loses the guest the same way). Refused before
  // anything is sent.
  if (!plan.remove.empty() && !s.qmp->Execute("query-kvm", nullptr, o.qmp_timeout).value("enabled", false))
    throw std::runtime_error("setvcpus " + o.name + ": QEMU cannot unplug a vCPU of a guest it runs under TCG and keep "
                             "the guest (a later plug aborts QEMU, a save corrupts its heap); the domain runs " +
                             std::to_string(r.before) + " vCPUs as before. Under KVM unplug works; under TCG start "
                             "the domain again with fewer vCPUs");

  std::vector<std::string> added;
  for (const qemu::QmpCommand& c : plan.add) {
    const json args = json::parse(c.arguments.dump());
    r.qmp.push_back({{"execute", c.execute}, {"arguments", args}});
    try {
      s.qmp->Execute(c.execute, args, o.qmp_timeout);
    } catch (const qemu::QmpError& e) {
      // Back to the count it had: the vCPUs plugged by this command go again.
      std::string undo;
      for (auto it = added.rbegin(); it != added.rend(); ++it) {
        try {
          if (!Unplug(*s.qmp, *it, o, &r.qmp)) undo += " " + *it;
        } catch (const std::exception&) {
          undo += " " + *it;
        }
      }
      const unsigned now = record();
      throw std::runtime_error("setvcpus " + o.name + ": QEMU refused to plug " + args.value("id", "") + ": " +
                               e.what() +
                               (undo.empty() ? "; the domain runs its " + std::to_string(now) + " vCPUs as before"
                                             : "; the guest has not released" + undo + " yet: it runs " +
                                                   std::to_string(now) + " vCPUs"));
    }
    added.push_back(args.value("id", ""));
  }
  for (const std::string& id : plan.remove) {
    bool released = false;
    try {
      released = Unplug(*s.qmp, id, o, &r.qmp);
    } catch (const qemu::QmpError& e) {
      // QEMU 7.2 refuses while the guest has not switched its ACPI to the modern CPU hotplug
      // interface (a guest that has not booted an OS): "device unplug request for not supported
      // device type".
      const unsigned now = record();
      throw std::runtime_error("setvcpus " + o.name + ": QEMU refused to unplug " + id + ": " + e.what() +
                               "; the domain runs " + std::to_string(now) + " vCPUs");
    }
    if (!released) {
      const unsigned now = record();
      throw std::runtime_error("setvcpus " + o.name + ": vcpu unplug request timed out: the guest has not released " +
                               id + " within " + std::to_string(o.unplug_wait.count() / 1000) +
                               " s (it may still; `dominfo` shows what runs); the domain runs " + std::to_string(now) +
                               " vCPUs");
    }
  }
  r.after = record();
  return r;
}

}  // namespace qlaunch::launcher
