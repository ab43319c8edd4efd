#include "launcher/bench/bench_accounting.h"

#include <stdexcept>

namespace qlaunch::launcher {

namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double* Find(Phases& phases, const std::string& key) {
  for (auto& [k, v] : phases)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace

bool IsPhaseKey(const std::string& key) {
  return key != "total" && key != "unaccounted" && key != "running" && key != "populated";
}

Phases AccountFromOutside(const Phases& in, int64_t entry_ns, int64_t end_ns, int64_t forked_ns, int64_t exited_ns) {
  if (!(forked_ns <= entry_ns && entry_ns <= end_ns && end_ns <= exited_ns))
    throw std::invalid_argument("start's clock (entry " + std::to_string(entry_ns) + ", end " +
                                std::to_string(end_ns) + " ns) is not inside the run the bench saw (fork " +
                                std::to_string(forked_ns) + ", exit " + std::to_string(exited_ns) + " ns)");
  Phases out = in;
  const double startup = Ms(entry_ns - forked_ns);
  double shift = startup;
  if (double* s = Find(out, "startup")) {
    shift = startup - *s;
    *s = startup;
  } else {
    out.insert(out.begin(), {"startup", startup});
  }
  for (const char* moment : {"running", "populated"})
    if (double* m = Find(out, moment); m && *m > 0) *m += shift;
  // exit goes after the last phase: before the first key that is no phase, at the end else.
  Phases::iterator at = out.begin();
  for (Phases::iterator it = out.begin(); it != out.end(); ++it)
    if (IsPhaseKey(it->first) && it->first != "exit") at = it + 1;
  if (double* e = Find(out, "exit")) *e = Ms(exited_ns - end_ns);
  else out.insert(at, {"exit", Ms(exited_ns - end_ns)});
  const double total = Ms(exited_ns - forked_ns);
  double sum = 0;
  for (const auto& [k, v] : out)
    if (IsPhaseKey(k)) sum += v;
  if (double* t = Find(out, "total")) *t = total;
  else out.emplace_back("total", total);
  if (double* u = Find(out, "unaccounted")) *u = total - sum;
  else out.emplace_back("unaccounted", total - sum);
  return out;
}

}  // namespace qlaunch::launcher
