#include "qemu_cmd/chardev_plan.h"

#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"
#include "qemu_cmd/raw_args.h"

namespace qlaunch::qemu {

namespace {

void Push(std::vector<std::string>* argv, std::string opt, std::string value) {
  argv->push_back(std::move(opt));
  argv->push_back(std::move(value));
}

}  // namespace

void RenderCharDevs(const domain::DomainDef& def, const PlanOptions& opts, std::vector<std::string>* argv) {
  bool have_serial = false;
  for (const auto& c : def.devices.chardevs) have_serial |= c.kind == "serial";
  int serial_index = 0, console_index = 0;
  bool have_virtio_serial = false;
  for (const domain::CharDev& c : def.devices.chardevs) {
    const bool virtio_console = c.kind == "console" && c.target_type == "virtio";
    if (c.kind == "console" && !virtio_console && have_serial) continue;  // same device as serial0
    std::string id = virtio_console ? "charconsole" + std::to_string(console_index)
                                    : "charserial" + std::to_string(serial_index);
    KeyValueBuilder chardev;
    if (c.type == "pty" && !opts.log_file.empty()) {
      chardev = KeyValueBuilder("file");
      chardev.Add("id", std::string_view(id));
      chardev.Add("path", std::string_view(opts.log_file));
    } else if (c.type == "pty" || c.type == "null" || c.type == "stdio") {
      chardev = KeyValueBuilder(c.type);
      chardev.Add("id", std::string_view(id));
    } else if (c.type == "file") {
      chardev = KeyValueBuilder("file");
      chardev.Add("id", std::string_view(id));
      chardev.Add("path", std::string_view(c.path));
    } else if (c.type == "unix") {
      chardev = KeyValueBuilder("socket");
      chardev.Add("id", std::string_view(id));
      chardev.Add("path", std::string_view(c.path));
      chardev.AddBool("server", true);
      chardev.AddBool("wait", false);
    } else {
      throw DiagnosticError(PlanError(def, c.line, c.kind, "character device type '" + c.type + "' is not supported"));
    }
    Push(argv, "-chardev", chardev.str());
    if (virtio_console) {
      if (!have_virtio_serial) {
        Push(argv, "-device", "virtio-serial-pci,id=virtio-serial0");
        have_virtio_serial = true;
      }
      Push(argv, "-device", "virtconsole,chardev=" + id + ",id=console" + std::to_string(console_index));
      ++console_index;
    } else {
      Push(argv, "-serial", "chardev:" + id);
      ++serial_index;
    }
  }
}

void PlanCharDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  std::vector<std::string> argv;
  RenderCharDevs(*ctx.def, *ctx.opts, &argv);
  AppendRawArgs("chardev", argv, out);
}

}  // namespace qlaunch::qemu
