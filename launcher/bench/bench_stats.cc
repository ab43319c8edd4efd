#include "launcher/bench/bench_stats.h"

#include <algorithm>
#include <stdexcept>

namespace qlaunch::launcher {

double Median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

RunSummary Summarize(const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("summary of no runs");
  auto [min, max] = std::minmax_element(values.begin(), values.end());
  return RunSummary{values.size(), Median(values), *min, *max};
}

std::optional<double> RoundRatioMedian(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    throw std::invalid_argument("ratio of " + std::to_string(x.size()) + " runs to " + std::to_string(y.size()));
  std::vector<double> ratios;
  for (size_t i = 0; i < x.size(); ++i)
    if (y[i] > 0) ratios.push_back(x[i] / y[i]);
  if (ratios.empty()) return std::nullopt;
  return Median(std::move(ratios));
}

std::vector<size_t> RoundOrder(size_t count, size_t round) {
  std::vector<size_t> order;
  for (size_t i = 0; i < count; ++i) order.push_back((i + round) % count);
  return order;
}

Phases PhaseMedians(const std::vector<Phases>& runs) {
  std::vector<std::pair<std::string, std::vector<double>>> by_phase;
  for (const Phases& run : runs)
    for (const auto& [name, ms] : run) {
      auto it = std::find_if(by_phase.begin(), by_phase.end(), [&](const auto& p) { return p.first == name; });
      if (it == by_phase.end()) it = by_phase.insert(by_phase.end(), {name, {}});
      it->second.push_back(ms);
    }
  Phases out;
  for (auto& [name, values] : by_phase) out.emplace_back(name, Median(std::move(values)));
  return out;
}

}  // namespace qlaunch::launcher
