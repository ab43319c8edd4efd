#include "support/device_facts.h"

#include "support/qmp_facts.h"

namespace qlaunch::testing {

using nlohmann::json;

Monitor MonitorOf(const std::string& name, std::function<RunResult(const std::vector<std::string>&)> run) {
  return [name, run](const std::string& command, bool hmp) {
    std::vector<std::string> args = {"qemu-monitor-command", name};
    if (hmp) args.push_back("--hmp");
    args.push_back(command);
    // A verb that failed answered nothing: an error the facts name (an HMP "Error" line; QMP text
    // that is no reply), never an empty answer two failing monitors would agree on.
    const RunResult r = run(args);
    if (r.exit_code != 0 || r.timed_out)
      return "Error: qemu-monitor-command " + command + " failed (" + r.Describe() + ")";
    return r.out;
  };
}

json Qmp(const Monitor& ask, const std::string& command) {
  std::string out = ask("{\"execute\":\"" + command + "\"}", false);
  json reply = json::parse(out, nullptr, false);
  if (reply.is_discarded()) return {{"error", out}};
  if (reply.contains("return")) return reply["return"];
  return {{"error", reply.dump()}};
}

json DeviceFacts(const Monitor& ask) {
  json f, errors = json::array();
  auto hmp = [&](const std::string& command) {
    std::string out = ask(command, true);
    // `info qtree` always prints the machine's bus tree: empty is no answer.
    if (out.find("unknown command") != std::string::npos || out.rfind("Error", 0) == 0 ||
        (command == "info qtree" && out.find_first_not_of(" \r\n") == std::string::npos))
      errors.push_back(command + ": " + (out.empty() ? std::string("no output") : out));
    return out;
  };
  auto qmp = [&](const std::string& command) {
    json r = Qmp(ask, command);
    if (r.is_object() && r.contains("error")) errors.push_back(command + ": " + r["error"].dump());
    return r;
  };
  auto fact = [&](const char* name, const std::function<json()>& read) {
    try {
      f[name] = read();
    } catch (const std::exception& e) {
      errors.push_back(std::string(name) + ": " + e.what());
      f[name] = "unreadable";
    }
  };
  fact("qtree", [&] { return json(QtreeDeviceTypes(hmp("info qtree"))); });
  fact("block", [&] { return BlockFacts(qmp("query-block")); });
  fact("chardev", [&] { return ChardevFacts(qmp("query-chardev")); });
  fact("network", [&] { return NetworkFacts(hmp("info network")); });
  fact("usb", [&] { return UsbFacts(hmp("info usb")); });
  fact("vnc", [&] { return DisplayFacts(qmp("query-vnc")); });
  fact("spice", [&] { return DisplayFacts(qmp("query-spice")); });
  fact("balloon", [&] {
    // Without a balloon device QEMU answers query-balloon with an error: that one is a fact.
    json balloon = Qmp(ask, "query-balloon");
    return balloon.contains("actual") ? balloon["actual"] : json("none");
  });
  fact("vcpus", [&] {
    json cpus = qmp("query-cpus-fast");
    return cpus.is_array() ? json(cpus.size()) : json("unreadable");
  });
  fact("memdev", [&] { return MemdevFacts(qmp("query-memdev")); });
  f["errors"] = errors;
  return f;
}

}  // namespace qlaunch::testing
