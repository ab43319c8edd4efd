// The arithmetic of `qlaunch bench`, pure: medians, min/max, the ratio of two starters taken
// round by round, the rotating order of the starters and the median of each start phase.
//
// Ratios are the median over rounds of X_i / Y_i (X and Y run in the same round i), not the
// ratio of two medians: a round where the whole host is slower (a noisy neighbour, a kernel
// compacting memory) then moves both numbers of that round and cancels out of its ratio.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qlaunch::launcher {

// The median (the mean of the middle two for an even count). Throws std::invalid_argument for
// no values.
double Median(std::vector<double> values);

struct RunSummary {
  size_t runs = 0;
  double median = 0, min = 0, max = 0;
};
// Throws std::invalid_argument for no values.
RunSummary Summarize(const std::vector<double>& values);

// The median over rounds of x[i] / y[i]. nullopt when there is no round, or no round with
// y[i] > 0; throws std::invalid_argument when x and y have different lengths.
std::optional<double> RoundRatioMedian(const std::vector<double>& x, const std::vector<double>& y);

// The order the starters 0..count-1 run in, round `round` (0-based): rotated by one a round
// (0 1 2, 1 2 0, 2 0 1, 0 1 2, ...), so none of them is always the one that runs first, right
// after the previous round's last starter gave its memory back.
std::vector<size_t> RoundOrder(size_t count, size_t round);

// One start's phases as its JSON lists them ("parse" -> ms, ..., "total" -> ms), in order.
using Phases = std::vector<std::pair<std::string, double>>;
// For each phase named by any run, the median over the runs that have it; phases in the order
// they first appear.
Phases PhaseMedians(const std::vector<Phases>& runs);

}  // namespace qlaunch::launcher
