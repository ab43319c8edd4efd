// The shared memfds qlaunch made for a domain ("memfd:qlaunch:<domain>:<backend id>",
// start_memory.h) as a QEMU holds them: found through /proc/<pid>/fd, which root may open again to
// get the same memory (migrate --local hands them to a new QEMU so).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace qlaunch::launcher {

// Backend id -> one /proc/<pid>/fd/N path of that memfd (QEMU holds each twice: as it inherited it
// and as it opened /proc/self/fd/N; either names the same memory). Of two memories of one id (a
// DIMM of the start detached, its inherited memfd left, and another attached since under its id),
// the one QEMU maps. Empty when QEMU holds none.
std::map<std::string, std::filesystem::path> QemuMemfds(pid_t pid, const std::string& domain);

// Frees the memory of the memfds of backend `id` QEMU still holds once that backend is gone from
// it: a DIMM started from the command line was inherited (fd N, then /proc/self/fd/N), and
// object-del closes only QEMU's own open of it; the inherited fd stays, with every page. So the
// memfd is opened again through /proc/<pid>/fd and its pages punched out, only when QEMU maps
// none of it (/proc/<pid>/maps; QEMU unmaps a deleted backend a moment after object-del returns,
// so for up to `wait`): a backend still in use keeps its memory. Returns the bytes freed; throws
// std::runtime_error (nothing freed) when QEMU still maps it or the punch fails. 0 when QEMU holds
// no such memfd.
uint64_t ReleaseUnmappedMemfd(pid_t pid, const std::string& domain, const std::string& id,
                              std::chrono::milliseconds wait = std::chrono::seconds(5));

}  // namespace qlaunch::launcher
