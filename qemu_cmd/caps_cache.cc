#include "qemu_cmd/caps_cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace qlaunch::qemu {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kFormat = 2;  // 2: virtio-mem and backend reserve

std::string PathHash(const std::string& path) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64: stable across builds and runs
  for (unsigned char c : path) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string EnvOrEmpty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::optional<CapsCacheKey> MakeCapsCacheKey(const std::string& binary) {
  std::error_code ec;
  fs::path canonical = fs::canonical(binary, ec);
  if (ec) return std::nullopt;
  struct stat st;
  if (::stat(canonical.c_str(), &st) != 0) return std::nullopt;
  CapsCacheKey key;
  key.path = canonical.string();
  key.size = static_cast<std::uintmax_t>(st.st_size);
  key.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return key;
}

fs::path DefaultCapsCacheDir() {
  if (std::string d = EnvOrEmpty("QLAUNCH_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = EnvOrEmpty("XDG_CACHE_HOME"); !d.empty() && d[0] == '/') return fs::path(d) / "qlaunch";
  std::string home = EnvOrEmpty("HOME");
  if (home.empty()) {
    if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) home = pw->pw_dir;
  }
  if (home.empty()) return {};
  return fs::path(home) / ".cache" / "qlaunch";
}

fs::path CapsCacheFile(const fs::path& cache_dir, const CapsCacheKey& key) {
  return cache_dir / ("caps-" + PathHash(key.path) + ".json");
}

std::optional<CachedCaps> LoadCachedCaps(const fs::path& cache_dir, const CapsCacheKey& key) {
  if (cache_dir.empty()) return std::nullopt;
  std::ifstream in(CapsCacheFile(cache_dir, key));
  if (!in) return std::nullopt;
  try {
    json j = json::parse(in);
    if (j.value("format", 0) != kFormat) return std::nullopt;
    const json& k = j.at("key");
    CapsCacheKey stored{k.at("path").get<std::string>(), k.at("size").get<std::uintmax_t>(),
                        k.at("mtime_ns").get<std::int64_t>()};
    if (!(stored == key)) return std::nullopt;
    CachedCaps entry;
    entry.caps = j.at("caps").get<QemuCaps>();
    entry.kvm_compiled = j.at("kvm_compiled").get<bool>();
    return entry;
  } catch (const json::exception&) {
    return std::nullopt;  // unreadable or from another layout: reprobe and overwrite
  }
}

bool StoreCachedCaps(const fs::path& cache_dir, const CapsCacheKey& key, const CachedCaps& entry) {
  if (cache_dir.empty()) return false;
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) return false;
  json j = {
      {"format", kFormat},
      {"key", {{"path", key.path}, {"size", key.size}, {"mtime_ns", key.mtime_ns}}},
      {"kvm_compiled", entry.kvm_compiled},
      {"caps", entry.caps},
  };
  const std::string text = j.dump(2) + "\n";
  const fs::path final_path = CapsCacheFile(cache_dir, key);
  std::string tmpl = (cache_dir / ("." + final_path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return false;
  bool ok = true;
  for (size_t off = 0; ok && off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;
    else off += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::close(fd) != 0) ok = false;
  if (ok && ::rename(tmpl.c_str(), final_path.c_str()) != 0) ok = false;
  if (!ok) ::unlink(tmpl.c_str());
  return ok;
}

}  // namespace qlaunch::qemu
