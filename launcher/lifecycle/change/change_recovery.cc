// The change journal's recovery (change_recovery.h).
#include "launcher/lifecycle/change/change_recovery.h"

#include <unistd.h>

#include <algorithm>

#include "launcher/host/file_labels.h"
#include "launcher/lifecycle/change/media_record.h"
#include "launcher/lifecycle/change/memory_hotplug.h"
#include "launcher/lifecycle/change/running_def.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

void RunQuietly(qemu::QmpClient& qmp, const json& call, std::chrono::milliseconds timeout) {
  if (!call.is_object() || call.value("execute", "").empty()) return;
  try {
    qmp.Execute(call["execute"], call.value("arguments", json()), timeout);
  } catch (const std::exception&) {
  }
}

bool DeviceExists(qemu::QmpClient& qmp, const std::string& id, std::chrono::milliseconds timeout) {
  for (const json& p : qmp.Execute("qom-list", {{"path", "/machine/peripheral"}}, timeout))
    if (p.value("name", "") == id) return true;
  return false;
}

void GiveBack(const StateDir& state, const fs::path& dir, const std::vector<std::string>& files,
              const domain::DomainDef& still_running) {
  // What the domain still opens keeps its owner (read once: it opens qcow2 headers for their
  // backing chains).
  const std::vector<LabelTarget> in_use = LabelTargets(still_running);
  std::vector<std::string> give;
  for (const std::string& f : files)
    if (std::none_of(in_use.begin(), in_use.end(), [&](const LabelTarget& t) { return t.path == f; })) give.push_back(f);
  if (!give.empty()) state.WithLock([&] { RestoreLabelsOf(dir, give); });
}

// Removes a device QEMU no longer has from the state dir: its backends (already gone with it
// for most), its record and element, its image's owner, its socket.
void FinishDetach(const StateDir& state, const fs::path& dir, qemu::QmpClient& qmp, const json& change,
                  std::chrono::milliseconds timeout) {
  for (const json& c : change.value("release", json::array())) RunQuietly(qmp, c, timeout);
  RunningState st = LoadRunningState(dir);
  const std::string id = change.value("id", "");
  if (const json mem = change.value("memory", json()); mem.is_object()) {
    FinishMemoryDetach(dir, &st, id, mem);
  } else {
    for (const qemu::DeviceRecord& r : st.records)
      if (r.id == id) {
        CommitDetach(&st, r.element, r.line);
        break;
      }
  }
  GiveBack(state, dir, change.value("files", std::vector<std::string>{}), st.def);
  if (const std::string socket = change.value("socket", ""); !socket.empty()) ::unlink(socket.c_str());
  if (const std::string target = change.value("target", ""); !target.empty()) ForgetMedia(dir, target);
}

namespace {

// A change-media cut short: QEMU's drive holds the new medium (record it, give the old one
// back) or not (remove the new nodes, give the new image back).
void RecoverMedia(const StateDir& state, const fs::path& dir, qemu::QmpClient& qmp, const json& ch,
                  std::chrono::milliseconds timeout) {
  std::string node_now;
  for (const json& b : qmp.Execute("query-block", nullptr, timeout))
    if (b.value("qdev", "") == ch.value("id", "") && b.contains("inserted")) {
      node_now = b["inserted"].value("node-name", "");
      if (node_now.ends_with("-format")) node_now.resize(node_now.size() - 7);
    }
  const std::string node = ch.value("node", "");
  const RunningState st = LoadRunningState(dir);
  if (node_now == node) {
    RecordMediaChange(dir, ch.value("target", ""), ch.value("type", "file"), ch.value("source", ""), node,
                      ch.value("next_node_index", 0u));
    if (const std::string old = ch.value("old_source", ""); !old.empty() && old != ch.value("source", ""))
      GiveBack(state, dir, {old}, LoadRunningState(dir).def);
  } else {
    if (!node.empty())
      for (const char* part : {"-format", "-storage"})
        RunQuietly(qmp, {{"execute", "blockdev-del"}, {"arguments", {{"node-name", node + part}}}}, timeout);
    if (ch.value("relabelled", false)) GiveBack(state, dir, {ch.value("source", "")}, st.def);
  }
}

}  // namespace

// What a killed qlaunch left in change.json, finished or undone as QEMU now has it; and the
// detaches the guest has completed since detach-device stopped waiting.
void RecoverChanges(const StateDir& state, const std::string& name, qemu::QmpClient& qmp,
                    std::chrono::milliseconds timeout) {
  const fs::path dir = state.DomainDir(name);
  std::vector<json> pending = PendingDetaches(dir);
  if (std::optional<json> ch = ReadChange(dir)) {
    const std::string id = ch->value("id", "");
    const bool exists = !id.empty() && DeviceExists(qmp, id, timeout);
    if (ch->value("op", "") == "attach") {
      RunningState st = LoadRunningState(dir);
      if (exists) {
        CommitAttach(&st, ch->value("xml", ""), qemu::DeviceRecordFromJson(ch->value("record", json::object())),
                     ch->value("node_index", st.node_index), ch->value("host_nic", json()));
        if (const json mem = ch->value("memory", json()); mem.is_object())
          CommitMemoryDevices(&st, mem.value("backend", json()), mem.value("device", json()), "", "",
                              mem.value("memory_bytes_after", uint64_t{0}));
      } else {
        const json undo = ch->value("undo", json::array());
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) RunQuietly(qmp, *it, timeout);
        GiveBack(state, dir, ch->value("files", std::vector<std::string>{}), st.def);
        if (const std::string socket = ch->value("socket", ""); !socket.empty()) ::unlink(socket.c_str());
      }
    } else if (ch->value("op", "") == "detach") {
      pending.push_back(*ch);  // asked of QEMU or not: settled below by whether the device exists
    } else if (ch->value("op", "") == "media") {
      RecoverMedia(state, dir, qmp, *ch, timeout);
    }
    ClearChange(dir);
  }
  std::vector<json> still;
  for (const json& p : pending) {
    if (DeviceExists(qmp, p.value("id", ""), timeout)) {
      still.push_back(p);
    } else {
      FinishDetach(state, dir, qmp, p, timeout);
    }
  }
  SetPendingDetaches(dir, still);
}

}  // namespace qlaunch::launcher
