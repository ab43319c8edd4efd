#include "support/sequence_shrinker.h"

#include <algorithm>
#include <set>

namespace qlaunch::testing::seq {

ShrinkResult Shrink(const Sequence& failing, const std::function<bool(const Sequence&)>& fails, size_t max_runs,
                    const std::function<bool()>& should_stop, const Limits& limits) {
  ShrinkResult r;
  r.minimal = Normalized(failing, limits);
  std::set<std::string> tried = {SequenceText(r.minimal)};
  bool stopped = false;
  // Runs the candidate unless it is empty or was tried; true when it fails.
  auto try_candidate = [&](const Sequence& raw) {
    const Sequence c = Normalized(raw, limits);
    if (c.empty() || !Modelled(c, limits) || !tried.insert(SequenceText(c)).second) return false;
    if (r.runs >= max_runs || (should_stop && should_stop())) {
      stopped = true;
      return false;
    }
    ++r.runs;
    if (!fails(c)) return false;
    r.minimal = c;
    return true;
  };

  size_t chunks = 2;
  while (r.minimal.size() >= 2 && !stopped) {
    const size_t n = r.minimal.size();
    chunks = std::min(chunks, n);
    bool reduced = false;
    // Each complement: the sequence without its i-th chunk (of `chunks` nearly equal ones).
    for (size_t i = 0; i < chunks && !stopped; ++i) {
      const size_t begin = i * n / chunks, end = (i + 1) * n / chunks;
      Sequence without(r.minimal.begin(), r.minimal.begin() + static_cast<std::ptrdiff_t>(begin));
      without.insert(without.end(), r.minimal.begin() + static_cast<std::ptrdiff_t>(end), r.minimal.end());
      if (try_candidate(without)) {
        chunks = std::max<size_t>(chunks - 1, 2);
        reduced = true;
        break;
      }
    }
    if (reduced) continue;
    if (chunks >= n) break;  // no single step can go: 1-minimal
    chunks = std::min(chunks * 2, n);
  }
  r.complete = !stopped;
  return r;
}

}  // namespace qlaunch::testing::seq
