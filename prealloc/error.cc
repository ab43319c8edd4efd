#include "prealloc/error.h"

#include <cstring>

#include "common/byte_size.h"

namespace qlaunch::prealloc {

PreallocCancelled::PreallocCancelled(uint64_t bytes_done, uint64_t bytes_total)
    : PreallocError("preallocation cancelled after " + FormatBytes(bytes_done) + " of " +
                    FormatBytes(bytes_total)),
      bytes_done_(bytes_done),
      bytes_total_(bytes_total) {}

std::string ErrnoMessage(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

}  // namespace qlaunch::prealloc
