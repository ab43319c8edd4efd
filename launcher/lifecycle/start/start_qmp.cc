#include "launcher/lifecycle/start/start_qmp.h"

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "qemu_cmd/vcpu_hotplug_plan.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

std::string TimeoutText(milliseconds qmp_timeout, milliseconds allowance) {
  std::string s = std::to_string((qmp_timeout + allowance).count()) + " ms (QLAUNCH_QMP_TIMEOUT_MS " +
                  std::to_string(qmp_timeout.count());
  if (allowance.count() > 0) s += " + " + std::to_string(allowance.count()) + " for QEMU's preallocation";
  return s + ")";
}

}  // namespace

milliseconds PreallocAllowance(uint64_t bytes) { return milliseconds((bytes >> 20) * 2); }

std::unique_ptr<qemu::QmpClient> ConnectQmp(const fs::path& socket, milliseconds qmp_timeout, milliseconds allowance) {
  try {
    return qemu::QmpClient::Connect(socket.string(), qmp_timeout + allowance, /*wait_for_server=*/false);
  } catch (const qemu::QmpClosed&) {
    throw;  // QEMU went away: FailureMessage reports how it ended, with its log
  } catch (const qemu::QmpTimeout& e) {
    throw qemu::QmpTimeout(std::string(e.what()) + " (no QMP greeting within " + TimeoutText(qmp_timeout, allowance) +
                           ")");
  }
}

void PlugVcpus(qemu::QmpClient& qmp, const qemu::LaunchPlan& plan, milliseconds timeout) {
  if (plan.plug_vcpus_to == 0) return;
  const std::vector<qemu::HotpluggableCpu> cpus =
      qemu::ParseHotpluggableCpus(qmp.Execute("query-hotpluggable-cpus", nullptr, timeout));
  const qemu::VcpuChange change = qemu::PlanSetVcpus(cpus, qemu::PluggedCount(cpus), plan.plug_vcpus_to);
  for (const qemu::QmpCommand& c : change.add) {
    const nlohmann::json args = nlohmann::json::parse(c.arguments.dump());
    try {
      qmp.Execute(c.execute, args, timeout);
    } catch (const qemu::QmpError& e) {
      throw std::runtime_error("cannot plug vCPU " + args.value("id", "") + " as the domain ran it (<vcpus>): " +
                               e.what());
    }
  }
}

void BeforeCont(qemu::QmpClient& qmp, const qemu::LaunchPlan& plan, milliseconds timeout) {
  PlugVcpus(qmp, plan, timeout);
  for (const auto& c : plan.before_cont) qmp.Execute(c.execute, nlohmann::json::parse(c.arguments_json), timeout);
  auto attempt = [&](const std::string& what, const std::string& command, const nlohmann::json& args) {
    try {
      qmp.Execute(command, args, timeout);
    } catch (const qemu::QmpTimeout&) {
      throw;
    } catch (const qemu::QmpError& e) {
      std::fprintf(stderr, "qlaunch: warning: %s: %s\n", what.c_str(), e.what());
    }
  };
  for (const auto& b : plan.backends) {
    if (b.thread_context.empty()) continue;
    attempt("clearing prealloc-context of " + b.id, "qom-set",
            {{"path", "/objects/" + b.id}, {"property", "prealloc-context"}, {"value", ""}});
  }
  for (const auto& ctx : plan.contexts) attempt("object-del " + ctx.id, "object-del", {{"id", ctx.id}});
}

void WaitRunning(qemu::QmpClient& qmp, milliseconds timeout) {
  // QEMU sends RESUME once the run state is running, before cont's reply: when it came with the
  // reply, and no STOP or SHUTDOWN after it, the guest runs and query-status would only say so.
  bool resumed = false;
  while (std::optional<nlohmann::json> ev = qmp.NextEvent(milliseconds(0))) {
    const std::string name = ev->value("event", "");
    if (name == "RESUME") resumed = true;
    if (name == "STOP" || name == "SHUTDOWN") resumed = false;
  }
  if (resumed) return;
  auto status = [&] { return qmp.Execute("query-status", nullptr, timeout).value("status", std::string()); };
  std::string now = status();
  if (now == "running") return;
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    std::optional<nlohmann::json> ev = qmp.NextEvent(left);
    if (!ev) break;
    if (ev->value("event", "") == "RESUME") break;
  }
  if ((now = status()) == "running") return;
  throw std::runtime_error("QEMU did not start running after 'cont' (query-status says '" + now + "')");
}

}  // namespace qlaunch::launcher
