// Tables as virsh 9.0 prints them (its vshTable): a header and rows, each line starting with a
// space, columns padded to their widest cell and three spaces apart (the last one unpadded), a
// line of dashes under the header (the widths plus three per column), an empty line at the end.
#pragma once

#include <string>
#include <vector>

namespace qlaunch::launcher {

// An empty cell is printed as "-", as virsh prints what a domain lacks.
std::string VirshTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace qlaunch::launcher
