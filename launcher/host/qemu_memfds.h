// The shared memfds qlaunch made for a domain ("memfd:qlaunch:<domain>:<backend id>",
// start_memory.h) as a QEMU holds them: found through /proc/<pid>/fd, which root may open again to
// get the same memory (migrate --local hands them to a new QEMU so).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>

namespace qlaunch::launcher {

// Backend id -> one /proc/<pid>/fd/N path of that memfd (QEMU holds each twice: as it inherited it
// and as it opened /proc/self/fd/N; either names the same memory). Empty when QEMU holds none.
std::map<std::string, std::filesystem::path> QemuMemfds(pid_t pid, const std::string& domain);

}  // namespace qlaunch::launcher
