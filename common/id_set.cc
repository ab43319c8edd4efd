#include "common/id_set.h"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace qlaunch {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<unsigned> ParseId(std::string_view s, unsigned max_id) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || value > max_id) return std::nullopt;
  return value;
}

}  // namespace

IdSet::IdSet(std::initializer_list<unsigned> ids) : IdSet(std::vector<unsigned>(ids)) {}

IdSet::IdSet(std::vector<unsigned> ids) : ids_(std::move(ids)) {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

std::optional<IdSet> IdSet::Parse(std::string_view text, unsigned max_id) {
  IdSet add, remove;
  text = Trim(text);
  if (text.empty()) return add;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = Trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) return std::nullopt;
    bool exclude = item.front() == '^';
    if (exclude) item.remove_prefix(1);
    size_t dash = item.find('-');
    unsigned lo, hi;
    if (dash == std::string_view::npos) {
      auto id = ParseId(item, max_id);
      if (!id) return std::nullopt;
      lo = hi = *id;
    } else {
      if (exclude) return std::nullopt;  // libvirt does not accept "^1-3"
      auto a = ParseId(item.substr(0, dash), max_id);
      auto b = ParseId(item.substr(dash + 1), max_id);
      if (!a || !b || *a > *b) return std::nullopt;
      lo = *a;
      hi = *b;
    }
    for (unsigned i = lo; i <= hi; ++i) (exclude ? remove : add).ids_.push_back(i);
    if (comma == text.size()) break;
  }
  add = IdSet(std::move(add.ids_));
  remove = IdSet(std::move(remove.ids_));
  return add.Minus(remove);
}

void IdSet::Insert(unsigned id) {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || *it != id) ids_.insert(it, id);
}

void IdSet::Erase(unsigned id) {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it != ids_.end() && *it == id) ids_.erase(it);
}

bool IdSet::Contains(unsigned id) const { return std::binary_search(ids_.begin(), ids_.end(), id); }

IdSet IdSet::Union(const IdSet& other) const {
  IdSet r;
  std::set_union(ids_.begin(), ids_.end(), other.ids_.begin(), other.ids_.end(), std::back_inserter(r.ids_));
  return r;
}

IdSet IdSet::Intersect(const IdSet& other) const {
  IdSet r;
  std::set_intersection(ids_.begin(), ids_.end(), other.ids_.begin(), other.ids_.end(),
                        std::back_inserter(r.ids_));
  return r;
}

IdSet IdSet::Minus(const IdSet& other) const {
  IdSet r;
  std::set_difference(ids_.begin(), ids_.end(), other.ids_.begin(), other.ids_.end(),
                      std::back_inserter(r.ids_));
  return r;
}

bool IdSet::Intersects(const IdSet& other) const { return !Intersect(other).Empty(); }

bool IdSet::IsSubsetOf(const IdSet& other) const {
  return std::includes(other.ids_.begin(), other.ids_.end(), ids_.begin(), ids_.end());
}

std::vector<std::pair<unsigned, unsigned>> IdSet::Ranges() const {
  std::vector<std::pair<unsigned, unsigned>> out;
  for (unsigned id : ids_) {
    if (!out.empty() && out.back().second + 1 == id)
      out.back().second = id;
    else
      out.emplace_back(id, id);
  }
  return out;
}

std::string IdSet::ToString() const {
  std::string s;
  for (auto [lo, hi] : Ranges()) {
    if (!s.empty()) s += ',';
    s += std::to_string(lo);
    if (hi != lo) s += '-' + std::to_string(hi);
  }
  return s;
}

}  // namespace qlaunch
