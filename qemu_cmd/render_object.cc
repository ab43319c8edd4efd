#include "qemu_cmd/render_object.h"

#include <nlohmann/json.hpp>

#include "qemu_cmd/option_escape.h"

namespace qlaunch::qemu {

namespace {

using OrderedJson = nlohmann::ordered_json;

std::string Dump(const OrderedJson& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The properties of a backend in libvirt's order. Each entry is rendered by both syntaxes.
struct Prop {
  enum Kind { kString, kNumber, kBool, kList };
  Kind kind = kString;
  std::string key;
  std::string s;
  uint64_t n = 0;
  bool b = false;
  IdSet list;

  static Prop Str(std::string k, std::string v) { Prop p; p.kind = kString; p.key = std::move(k); p.s = std::move(v); return p; }
  static Prop Num(std::string k, uint64_t v) { Prop p; p.kind = kNumber; p.key = std::move(k); p.n = v; return p; }
  static Prop Bool(std::string k, bool v) { Prop p; p.kind = kBool; p.key = std::move(k); p.b = v; return p; }
  static Prop List(std::string k, IdSet v) { Prop p; p.kind = kList; p.key = std::move(k); p.list = std::move(v); return p; }
};

std::vector<Prop> BackendProps(const MemoryBackend& m) {
  std::vector<Prop> p;
  auto str = [&](std::string k, std::string v) { p.push_back(Prop::Str(std::move(k), std::move(v))); };
  auto num = [&](std::string k, uint64_t v) { p.push_back(Prop::Num(std::move(k), v)); };
  auto boolean = [&](std::string k, bool v) { p.push_back(Prop::Bool(std::move(k), v)); };
  auto list = [&](std::string k, const IdSet& v) { p.push_back(Prop::List(std::move(k), v)); };

  str("qom-type", QomType(m));
  str("id", m.id);
  const bool launcher = m.prealloc == PreallocBy::kLauncher;
  if (launcher) {
    str("mem-path", m.mem_path);
    boolean("share", true);
    boolean("prealloc", false);
  } else {
    if (m.type == BackendType::kMemfd && m.page_size_bytes) {
      boolean("hugetlb", true);
      num("hugetlbsize", m.page_size_bytes);
    }
    if (m.type == BackendType::kFile) {
      str("mem-path", m.mem_path);
      if (m.discard) boolean("discard-data", *m.discard);
    }
    if (m.share_explicit && m.type != BackendType::kRam) boolean("share", *m.share_explicit);
    if (m.reserve) boolean("reserve", *m.reserve);
    if (m.prealloc == PreallocBy::kQemu) boolean("prealloc", true);
    if (m.prealloc == PreallocBy::kQemu && m.prealloc_threads) num("prealloc-threads", m.prealloc_threads);
  }
  num("size", m.size_bytes);
  if (!m.host_nodes.Empty()) {
    list("host-nodes", m.host_nodes);
    if (!m.policy.empty()) str("policy", m.policy);
  }
  if (!launcher && !m.thread_context.empty()) str("prealloc-context", m.thread_context);
  return p;
}

std::string RenderProps(const std::vector<Prop>& props, const QemuCaps& caps) {
  if (caps.json_object) {
    OrderedJson j = OrderedJson::object();
    for (const Prop& p : props) {
      switch (p.kind) {
        case Prop::kString: j[p.key] = p.s; break;
        case Prop::kNumber: j[p.key] = p.n; break;
        case Prop::kBool: j[p.key] = p.b; break;
        case Prop::kList: j[p.key] = p.list.Ids(); break;
      }
    }
    return Dump(j);
  }
  // key=value: the first property (qom-type) is the implied value.
  KeyValueBuilder kv(props.front().s);
  for (size_t i = 1; i < props.size(); ++i) {
    const Prop& p = props[i];
    switch (p.kind) {
      case Prop::kString: kv.Add(p.key, std::string_view(p.s)); break;
      case Prop::kNumber: kv.Add(p.key, p.n); break;
      case Prop::kBool: kv.AddBool(p.key, p.b); break;
      case Prop::kList: kv.AddList(p.key, p.list); break;
    }
  }
  return kv.str();
}

}  // namespace

std::string RenderBackendObject(const MemoryBackend& b, const QemuCaps& caps) {
  return RenderProps(BackendProps(b), caps);
}

std::string RenderThreadContextObject(const ThreadContext& tc, const QemuCaps& caps) {
  std::vector<Prop> p;
  p.push_back(Prop::Str("qom-type", "thread-context"));
  p.push_back(Prop::Str("id", tc.id));
  p.push_back(Prop::List("node-affinity", tc.node_affinity));
  return RenderProps(p, caps);
}

std::string RenderNumaNode(unsigned node_id, const IdSet& cpus, const std::string& memdev) {
  KeyValueBuilder kv("node");
  kv.Add("nodeid", node_id);
  kv.AddList("cpus", cpus);
  kv.Add("memdev", std::string_view(memdev));
  return kv.str();
}

std::string RenderMemoryDevice(const MemoryDeviceArg& d) {
  KeyValueBuilder kv(d.driver);
  kv.Add("node", d.node);
  kv.Add("memdev", std::string_view(d.memdev));
  kv.Add("id", std::string_view(d.id));
  if (d.slot) kv.Add("slot", *d.slot);
  if (d.addr) kv.Add("addr", *d.addr);
  return kv.str();
}

}  // namespace qlaunch::qemu
