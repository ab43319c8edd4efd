#include "qemu_cmd/misc_device_plan.h"

#include <nlohmann/json.hpp>

#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

PlannedDevice Pci(const std::string& driver, const std::string& id, PciRank rank, const domain::DeviceAddress& a,
                  const char* element, int line) {
  PlannedDevice d;
  d.family = "misc";
  d.driver = driver;
  d.id = id;
  d.AtPci(rank, a);
  d.element = element;
  d.line = line;
  return d;
}

const char* OnOff(bool v) { return v ? "on" : "off"; }

void PlanWatchdog(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const auto& dogs = ctx.def->devices.watchdogs;
  if (dogs.empty()) return;
  if (dogs.size() > 1)
    throw DiagnosticError(PlanError(*ctx.def, dogs[1].line, "watchdog", "only a single watchdog device is supported"));
  const domain::Watchdog& w = dogs[0];
  PlannedDevice d;
  if (w.model == "i6300esb") {
    d = Pci("i6300esb", "watchdog0", PciRank::kWatchdog, w.address, "watchdog", w.line);
  } else {  // ib700: ISA
    d.family = "misc";
    d.driver = w.model;
    d.id = "watchdog0";
    d.element = "watchdog";
    d.line = w.line;
  }
  d.after_args.push_back({"-watchdog-action", WatchdogAction(w.action)});
  out->push_back(std::move(d));
}

void PlanBalloon(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const auto& b = ctx.def->devices.memballoon;
  if (b && b->model != "virtio") return;  // model='none'
  if (!b) {  // absent: libvirt adds <memballoon model='virtio'/> on x86
    out->push_back(Pci("virtio-balloon-pci", "balloon0", PciRank::kBalloon, {}, "memballoon", 0));
    return;
  }
  PlannedDevice d = Pci("virtio-balloon-pci", "balloon0", PciRank::kBalloon, b->address, "memballoon", b->line);
  if (b->autodeflate) d.props.push_back({"deflate-on-oom", OnOff(*b->autodeflate)});
  if (b->free_page_reporting) d.props.push_back({"free-page-reporting", OnOff(*b->free_page_reporting)});
  out->push_back(std::move(d));
}

// The -object of an rng backend: JSON where QEMU takes it (6.0+), else key=value (5.2).
std::string RngObject(const QemuCaps& caps, const std::string& type, const std::string& id, const char* key,
                      const std::string& value) {
  if (caps.json_object) {  // libvirt's key order
    nlohmann::ordered_json j;
    j["qom-type"] = type;
    j["id"] = id;
    j[key] = value;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  KeyValueBuilder kv(type);
  kv.Add("id", std::string_view(id));
  kv.Add(key, std::string_view(value));
  return kv.str();
}

void PlanRngs(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const auto& rngs = ctx.def->devices.rngs;
  for (size_t i = 0; i < rngs.size(); ++i) {
    const domain::Rng& r = rngs[i];
    const std::string n = std::to_string(i), obj = "objrng" + n;
    PlannedDevice d = Pci("virtio-rng-pci", "rng" + n, PciRank::kRng, r.address, "rng", r.line);
    if (r.backend_model == "random") {
      d.host_args.push_back({"-object", RngObject(*ctx.caps, "rng-random", obj, "filename", r.source)});
    } else {  // egd: a socket chardev
      const std::string chr = "charrng" + n;
      KeyValueBuilder kv("socket");
      kv.Add("id", std::string_view(chr));
      if (r.egd_type == "tcp") {
        kv.Add("host", std::string_view(r.egd_host));
        kv.Add("port", std::string_view(r.egd_service));
      } else {
        kv.Add("path", std::string_view(r.egd_path));
      }
      if (r.egd_mode == "bind") {
        kv.AddBool("server", true);
        kv.AddBool("wait", false);
      }
      d.host_args.push_back({"-chardev", kv.str()});
      d.host_args.push_back({"-object", RngObject(*ctx.caps, "rng-egd", obj, "chardev", chr)});
    }
    d.props.push_back({"rng", obj});
    if (r.rate_bytes) d.props.push_back({"max-bytes", std::to_string(*r.rate_bytes)});
    if (r.rate_period) d.props.push_back({"period", std::to_string(*r.rate_period)});
    out->push_back(std::move(d));
  }
}

}  // namespace

std::string WatchdogAction(const std::string& action) { return action == "dump" ? "pause" : action; }

void PlanMiscDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  PlanWatchdog(ctx, out);
  PlanBalloon(ctx, out);
  PlanRngs(ctx, out);
  if (ctx.def->devices.panic) {  // ISA, port 0x505
    PlannedDevice d;
    d.family = "misc";
    d.driver = "pvpanic";
    d.element = "panic";
    d.line = ctx.def->devices.panic_line;
    out->push_back(std::move(d));
  }
}

}  // namespace qlaunch::qemu
