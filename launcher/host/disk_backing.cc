#include "launcher/host/disk_backing.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

namespace qlaunch::launcher {

namespace {

uint64_t BigEndian(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

// The backing file name a qcow2 header holds; nullopt when it is not a qcow2 or has none.
std::optional<std::string> BackingName(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[20];
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) return std::nullopt;
  if (BigEndian(header, 4) != 0x514649fbu) return std::nullopt;  // "QFI\xfb"
  const uint64_t offset = BigEndian(header + 8, 8);
  const uint64_t size = BigEndian(header + 16, 4);
  if (offset == 0 || size == 0 || size > 1023) return std::nullopt;
  std::string name(size, '\0');
  if (!in.seekg(static_cast<std::streamoff>(offset)) || !in.read(name.data(), static_cast<std::streamsize>(size)))
    return std::nullopt;
  return name;
}

}  // namespace

std::vector<std::string> QcowBackingChain(const std::string& image) {
  std::vector<std::string> chain;
  std::set<std::string> seen = {image};
  std::string current = image;
  for (int depth = 0; depth < 32; ++depth) {
    std::optional<std::string> name = BackingName(current);
    if (!name || name->starts_with("json:") || name->find("://") != std::string::npos) break;
    std::filesystem::path p(*name);
    if (p.is_relative()) p = std::filesystem::path(current).parent_path() / p;
    std::string next = p.lexically_normal().string();
    if (!seen.insert(next).second) break;
    std::error_code ec;
    if (!std::filesystem::exists(next, ec)) break;
    chain.push_back(next);
    current = next;
  }
  return chain;
}

}  // namespace qlaunch::launcher
