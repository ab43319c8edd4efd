#include "support/sequence_host.h"

#include <sys/stat.h>

#include <set>

#include "support/slurp.h"

namespace qlaunch::testing::seq {

namespace fs = std::filesystem;

HugepageUse HugepagesInUse(const std::string& domain) {
  constexpr blksize_t kPage = 2 << 20;  // hugetlbfs gives its page size as st_blksize
  const std::string needle = "memfd:qlaunch:" + domain + ":";
  std::set<std::pair<dev_t, ino_t>> seen;
  HugepageUse use;
  std::error_code ec;
  for (fs::directory_iterator proc("/proc", ec), end; !ec && proc != end; proc.increment(ec)) {
    const std::string pid = proc->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fec;
    for (fs::directory_iterator it(proc->path() / "fd", fec); !fec && it != end; it.increment(fec)) {
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_blksize != kPage) continue;
      if (!seen.insert({st.st_dev, st.st_ino}).second) continue;
      std::error_code lec;
      const bool ours = fs::read_symlink(it->path(), lec).string().find(needle) != std::string::npos;
      (ours ? use.ours : use.others) += uint64_t(st.st_blocks) * 512 / kPage;
    }
  }
  return use;
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
