#include "launcher/cli/virsh_table.h"

#include <algorithm>

namespace qlaunch::launcher {

std::string VirshTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::vector<std::string>> all{header};
  for (const auto& r : rows) {
    std::vector<std::string> row(header.size(), "-");
    for (size_t i = 0; i < std::min(r.size(), header.size()); ++i)
      if (!r[i].empty()) row[i] = r[i];
    all.push_back(std::move(row));
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& r : all)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (size_t i = 0; i < r.size(); ++i) {
      s += " " + r[i];
      if (i + 1 < r.size()) s += std::string(width[i] - r[i].size() + 2, ' ');
    }
    return s + "\n";
  };
  size_t dashes = 0;
  for (size_t w : width) dashes += w + 3;
  std::string out = line(all[0]) + std::string(dashes, '-') + "\n";
  for (size_t i = 1; i < all.size(); ++i) out += line(all[i]);
  return out + "\n";
}

}  // namespace qlaunch::launcher
