// The migration capabilities and parameters a source sets for one migration (`migrate`,
// `migrate --local`, `save`), and putting them back when the source keeps the guest.
//
// Every migration names every capability it depends on, on or off: a QEMU keeps what an earlier
// migration set (a QEMU that came in by `migrate --local` keeps x-ignore-shared on, and a save
// from it would then carry no RAM), so nothing may be left to what happens to be set. And a
// migration that fails or is cancelled, after which the source runs on, puts back what it changed
// (the capabilities, max-bandwidth, and the downtime-limit `--timeout-action suspend` raises), so
// the next one starts from what the domain had before.
#pragma once

#include <chrono>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

// QEMU refuses a max-bandwidth above SIZE_MAX / 1000 bytes/s; 1 TiB/s stands for "no limit".
inline constexpr uint64_t kUnlimitedBandwidth = uint64_t{1} << 40;

struct MigrationSettings {
  bool ignore_shared = false;  // x-ignore-shared: RAM in shared memory is not sent (`migrate --local`)
  // return-path: the destination reports on a back channel whether it loaded the guest, and QEMU
  // says completed only once it has (a socket URI; a save file cannot answer).
  bool return_path = false;
  uint64_t max_bandwidth = 0;  // bytes/s; 0: no limit
};

// [{"capability":"events","state":true}, x-ignore-shared, return-path], each named.
nlohmann::json MigrationCapabilities(const MigrationSettings& s);

// What a QEMU had before a source's settings: restored unless Released().
class SourceMigrationSettings {
 public:
  // Reads the capabilities and parameters, then sets `s`'s. Throws what QmpClient throws.
  SourceMigrationSettings(qemu::QmpClient& qmp, const MigrationSettings& s, std::chrono::milliseconds timeout);
  // Puts back the capabilities and parameters as they were (best effort: the guest runs either way).
  ~SourceMigrationSettings();
  SourceMigrationSettings(const SourceMigrationSettings&) = delete;
  SourceMigrationSettings& operator=(const SourceMigrationSettings&) = delete;

  // The source let the guest go (its QEMU quits): nothing to put back.
  void Release() { qmp_ = nullptr; }

 private:
  qemu::QmpClient* qmp_;
  std::chrono::milliseconds timeout_;
  nlohmann::json capabilities_;  // the entries of the capabilities qlaunch sets, as they were
  nlohmann::json parameters_;    // max-bandwidth and downtime-limit, as they were
};

}  // namespace qlaunch::launcher
