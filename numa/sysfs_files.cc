#include "numa/sysfs_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace qlaunch::numa {

namespace fs = std::filesystem;

namespace {

std::string_view Trim(std::string_view s) {
  const char* blanks = " \t\r\n";
  size_t b = s.find_first_not_of(blanks);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(blanks);
  return s.substr(b, e - b + 1);
}

}  // namespace

// open and read, not an ifstream: a start reads some dozens of these files twice (topology and
// pre-flight), and the stream's own set-up cost more than the reading.
std::optional<std::string> ReadTextFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw std::runtime_error(path.string() + ": cannot open for reading: " + std::strerror(errno));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path.string() + ": read error: " + std::strerror(err));
    }
  }
  ::close(fd);
  return text;
}

std::optional<uint64_t> ReadNumberFile(const fs::path& path) {
  auto text = ReadTextFile(path);
  if (!text) return std::nullopt;
  std::string_view s = Trim(*text);
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
    throw std::runtime_error(path.string() + ": expected an unsigned number, got '" + std::string(s) + "'");
  return value;
}

std::optional<IdSet> ReadIdListFile(const fs::path& path) {
  auto text = ReadTextFile(path);
  if (!text) return std::nullopt;
  std::string_view s = Trim(*text);
  // The kernel never writes exclusions; refuse them rather than accept libvirt-only syntax.
  auto ids = s.find('^') == std::string_view::npos ? IdSet::Parse(s) : std::nullopt;
  if (!ids) throw std::runtime_error(path.string() + ": not an id list: '" + std::string(s) + "'");
  return ids;
}

bool IsRealSysfs(const fs::path& root) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(root, ec);
  if (ec) return false;
  if (canonical.has_relative_path() && !canonical.has_filename()) canonical = canonical.parent_path();
  return canonical == fs::path("/sys");
}

}  // namespace qlaunch::numa
