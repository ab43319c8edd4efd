// What the verb sequence runner (sequence_runner.h) reads of the host between steps: the hugepages
// a domain's memfds hold, what is left in a state root, the end of a log.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace qlaunch::testing::seq {

// The 2 MiB pages held by the hugetlb files any process has open (memfds, hugetlbfs files), each
// file once, from its allocated blocks: `ours` by the memfds of `domain` ("memfd:qlaunch:DOMAIN:"),
// `others` by the rest. What a domain really takes from the pool, whoever filled it (qlaunch at a
// start, QEMU at a restore, the guest's faults); and what others on this machine take from it (a
// domain someone starts by hand does not wait for the tests' pool lock).
struct HugepageUse {
  uint64_t ours = 0, others = 0;
};
HugepageUse HugepagesInUse(const std::string& domain);

// The names in a state root ({} when it does not exist).
std::vector<std::string> RootEntries(const std::filesystem::path& root);

// The last `lines` lines of a file ("" when it cannot be read).
std::string Tail(const std::filesystem::path& file, size_t lines);

}  // namespace qlaunch::testing::seq
