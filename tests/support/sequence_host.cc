#include "support/sequence_host.h"

#include <sys/stat.h>

#include <set>

#include "support/slurp.h"

namespace qlaunch::testing::seq {

namespace fs = std::filesystem;

uint64_t HugepagesHeld(const std::vector<pid_t>& pids, const std::string& domain) {
  const std::string needle = "memfd:qlaunch:" + domain + ":";
  std::set<ino_t> seen;
  uint64_t bytes = 0;
  for (pid_t pid : pids) {
    std::error_code ec;
    for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
         it.increment(ec)) {
      std::error_code lec;
      const fs::path target = fs::read_symlink(it->path(), lec);
      struct stat st {};
      if (lec || target.string().find(needle) == std::string::npos || ::stat(it->path().c_str(), &st) != 0) continue;
      if (seen.insert(st.st_ino).second) bytes += uint64_t(st.st_blocks) * 512;
    }
  }
  return bytes / (2u << 20);
}

std::vector<std::string> RootEntries(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path().filename().string());
  return out;
}

std::string Tail(const fs::path& file, size_t lines) {
  const std::string text = Slurp(file);
  size_t at = text.size();
  if (at && text[at - 1] == '\n') --at;
  for (size_t n = 0; n < lines && at != std::string::npos && at > 0; ++n) at = text.rfind('\n', at - 1);
  return at == std::string::npos || at == 0 ? text : text.substr(at + 1);
}

}  // namespace qlaunch::testing::seq
