#include "launcher/lifecycle/observe/domain_xml.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "launcher/lifecycle/change/live_xml.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/observe/domain_list.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::chrono::milliseconds kQmpTimeout{3000};

// What QEMU says that the state dir does not record: the ptys it opened, the DIMMs' addresses,
// the balloon's size.
// Best effort: without an answer the XML leaves them out.
void AskQemu(const fs::path& socket, LiveXmlInput* in) {
  try {
    auto qmp = qemu::QmpClient::Connect(socket.string(), kQmpTimeout, /*wait_for_server=*/false);
    qmp->Execute("qmp_capabilities", nullptr, kQmpTimeout);
    for (const json& c : qmp->Execute("query-chardev", nullptr, kQmpTimeout)) {
      const std::string file = c.value("filename", "");
      if (file.rfind("pty:", 0) == 0) in->ptys[c.value("label", "")] = file.substr(4);
    }
    for (const json& m : qmp->Execute("query-memory-devices", nullptr, kQmpTimeout)) {
      const json data = m.value("data", json::object());
      if (data.contains("id") && data.contains("addr")) in->dimm_bases[data["id"]] = data["addr"].get<uint64_t>();
    }
    try {  // an error without a balloon device
      in->balloon_bytes = qmp->Execute("query-balloon", nullptr, kQmpTimeout).at("actual").get<uint64_t>();
    } catch (const std::exception&) {
    }
  } catch (const std::exception&) {
  }
}

}  // namespace

std::string LiveDomainXmlOf(const StateDir& state, const std::string& name, Verb verb) {
  const fs::path dir = KnownDomainDir(state, name);
  if (PeekDomain(state, name).kind == DomainStatus::Kind::kStale)
    throw std::runtime_error("domain " + name + " is not running (its QEMU is gone)" +
                             (fs::exists(dir / "domain.xml")
                                  ? "; `qlaunch dumpxml --inactive " + name + "` prints the XML it was started with"
                                  : std::string()));
  const ProcessRef qemu = RunningQemu(state, name, verb);
  LiveXmlInput in;
  // The running definition: the XML as given, with what attach-device and detach-device changed.
  in.file = RunningXmlPath(dir).string();
  const std::optional<std::string> xml = ReadSmallFile(in.file);
  if (!xml) throw std::runtime_error("domain " + name + ": cannot read " + in.file);
  in.domain_xml = *xml;
  in.plan = json::parse(ReadSmallFile(dir / "plan.json").value_or(""), nullptr, false);
  in.devices = ReadDevicesJson(state, name);
  in.id = qemu.pid;
  in.channel_dir = (dir / "channel").string();
  AskQemu(dir / "qmp.sock", &in);
  return LiveDomainXml(in);
}

std::string InactiveDomainXmlOf(const StateDir& state, const std::string& name) {
  const fs::path dir = KnownDomainDir(state, name);
  const DomainState now = StateFromStatus(PeekDomain(state, name));
  if (!Accepts(now, Verb::kDumpxmlInactive)) throw WrongStateError(RefusalMessage(name, now, Verb::kDumpxmlInactive));
  const std::optional<std::string> xml = ReadSmallFile(dir / "domain.xml");
  if (!xml)
    throw std::runtime_error("domain " + name + " " + (now == DomainState::kStarting ? "is still being started and " : "") +
                             "has no XML in " + dir.string() + " yet");
  return *xml;
}

}  // namespace qlaunch::launcher
