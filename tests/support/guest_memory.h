// A guest's memory seen from the host, through the shared memfds qlaunch made for it and QEMU holds
// ("memfd:qlaunch:<domain>:<backend id>"): root opens them again through /proc/<QEMU pid>/fd and
// maps them (hugetlb memfds take no write(2)). For migration tests: memory that is not all zero
// pages, and a digest to compare before and after.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace qlaunch::testing {

// Fills every page of each of the domain's memfds in QEMU `pid` with pseudo-random bytes from
// `seed`; returns how many memfds it filled (each counted once, though QEMU holds each twice).
// With `domain_dir` (its state dir), the warm pool files its records name (host/warm_pool.h)
// count as its memfds too, as QEMU `pid` holds them.
int FillQemuMemfds(pid_t pid, const std::string& domain, uint64_t seed, const std::filesystem::path& domain_dir = {});

// The <domain type> of a guest whose memory is filled while it runs: "qemu" (TCG) on every host.
// The random bytes land on what the guest's vCPU runs (SeaBIOS and its tables); under KVM it then
// stops in QEMU's internal-error state (seen with nested KVM), which a migration or save test would
// take for its own failure; under TCG it goes on running. These tests are about the stream, not the
// accelerator.
inline constexpr char kFilledGuestType[] = "qemu";

// A digest of the bytes of the domain's memfds in QEMU `pid`, by backend id in order
// ("ram-node0=<hex> ram-node1=<hex>"); "" when it holds none.
std::string DigestQemuMemfds(pid_t pid, const std::string& domain, const std::filesystem::path& domain_dir = {});

}  // namespace qlaunch::testing
