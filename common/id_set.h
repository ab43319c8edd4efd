// IdSet: a sorted set of small non-negative ids (CPUs, NUMA nodes, guest cells).
// Parses libvirt's list syntax ("0-3,8,^2") and the kernel's cpulist syntax ("0-3,8-11"),
// and formats back to the compact range form.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qlaunch {

class IdSet {
 public:
  IdSet() = default;
  IdSet(std::initializer_list<unsigned> ids);
  explicit IdSet(std::vector<unsigned> ids);

  // Parses "0-3,^2,8". Exclusions ('^N') remove ids added anywhere in the list.
  // Returns std::nullopt on any syntax error (empty items, garbage, reversed ranges,
  // ids above max_id). An empty or all-blank string parses to the empty set.
  static std::optional<IdSet> Parse(std::string_view text, unsigned max_id = 1u << 20);

  void Insert(unsigned id);
  void Erase(unsigned id);
  bool Contains(unsigned id) const;
  bool Empty() const { return ids_.empty(); }
  size_t Size() const { return ids_.size(); }
  unsigned Max() const { return ids_.back(); }  // precondition: !Empty()
  const std::vector<unsigned>& Ids() const { return ids_; }
  auto begin() const { return ids_.begin(); }
  auto end() const { return ids_.end(); }

  IdSet Union(const IdSet& other) const;
  IdSet Intersect(const IdSet& other) const;
  IdSet Minus(const IdSet& other) const;
  bool Intersects(const IdSet& other) const;
  bool IsSubsetOf(const IdSet& other) const;

  // "0-3,8,10-11"; "" for the empty set.
  std::string ToString() const;
  // Contiguous runs: {0,1,2,3,8} -> {{0,3},{8,8}}.
  std::vector<std::pair<unsigned, unsigned>> Ranges() const;

  friend bool operator==(const IdSet&, const IdSet&) = default;
  friend auto operator<=>(const IdSet& a, const IdSet& b) { return a.ids_ <=> b.ids_; }

 private:
  std::vector<unsigned> ids_;  // sorted, unique
};

}  // namespace qlaunch
