// The preallocator's failures. Messages are meant for the user as they are: they name the
// region, node and page size involved and what to do when that is obvious.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace qlaunch::prealloc {

class PreallocError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The stop flag was raised (SIGINT/SIGTERM or the caller) before population finished.
class PreallocCancelled : public PreallocError {
 public:
  PreallocCancelled(uint64_t bytes_done, uint64_t bytes_total);
  uint64_t bytes_done() const { return bytes_done_; }
  uint64_t bytes_total() const { return bytes_total_; }

 private:
  uint64_t bytes_done_;
  uint64_t bytes_total_;
};

// "what: strerror(err)".
std::string ErrnoMessage(const std::string& what, int err);

}  // namespace qlaunch::prealloc
