// What the verb sequence runner (sequence_runner.h) reads of the host between steps: the hugepages
// a domain's memfds hold, what is left in a state root, the end of a log.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace qlaunch::testing::seq {

// The 2 MiB pages the memfds of `domain` ("memfd:qlaunch:DOMAIN:...") open in `pids` hold, each
// memfd once (by inode), from its allocated blocks: what a domain really takes from the pool,
// whoever filled it (qlaunch at start, QEMU at a restore, the guest's faults).
uint64_t HugepagesHeld(const std::vector<pid_t>& pids, const std::string& domain);

// The names in a state root ({} when it does not exist).
std::vector<std::string> RootEntries(const std::filesystem::path& root);

// The last `lines` lines of a file ("" when it cannot be read).
std::string Tail(const std::filesystem::path& file, size_t lines);

}  // namespace qlaunch::testing::seq
