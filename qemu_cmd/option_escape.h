// Escaping for QEMU's key=value option syntax (QemuOpts / the opts visitor): a comma inside a
// value is written as ",,". Every string that comes from the user (domain name, paths, machine
// type, ...) and lands in a key=value option goes through EscapeOptionValue, usually by way of
// KeyValueBuilder, so that no input can add options of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/id_set.h"

namespace qlaunch::qemu {

// "a,b" -> "a,,b". Everything else is kept as it is (QEMU gives no other character a meaning
// inside a value).
std::string EscapeOptionValue(std::string_view value);

// Builds "head,key=value,key=value" with every value (and the head) escaped.
class KeyValueBuilder {
 public:
  KeyValueBuilder() = default;
  explicit KeyValueBuilder(std::string_view head);  // implied first value, e.g. "pc" or "node"

  KeyValueBuilder& Add(std::string_view key, std::string_view value);
  KeyValueBuilder& Add(std::string_view key, const char* value) { return Add(key, std::string_view(value)); }
  KeyValueBuilder& Add(std::string_view key, uint64_t value);
  KeyValueBuilder& Add(std::string_view key, unsigned value) { return Add(key, uint64_t{value}); }
  KeyValueBuilder& Add(std::string_view key, int value);
  KeyValueBuilder& AddBool(std::string_view key, bool value);  // on / off
  // Lists in the opts-visitor syntax: one key per contiguous run, "a-b" for a run of several
  // ids: {0,1,2,3} -> "k=0-3"; {0,2,3} -> "k=0,k=2-3". Adds nothing for the empty set.
  KeyValueBuilder& AddList(std::string_view key, const IdSet& ids);

  const std::string& str() const { return out_; }

 private:
  void Sep();
  std::string out_;
};

}  // namespace qlaunch::qemu
